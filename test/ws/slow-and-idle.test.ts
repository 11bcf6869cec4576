import t from 'tap'
import { connect } from 'node:net'
import WebSocket from 'ws'
import { anvilGateway } from '../helpers/anvil-gateway.js'
import { connectWs } from '../helpers/ws-client.js'
import { metric, until } from '../helpers/metrics.js'

// A slow client is disconnected with a reason instead of slowing others or eating memory; a
// half-open connection is closed after the idle time-out.
const {
  tg,
  key: { apiKey },
  wsUrl,
} = await anvilGateway(t, { ws: { maxBufferedBytes: 65_536, idleTimeoutSec: 8 } })
const url = `${wsUrl}?apikey=${apiKey}`
const closedBy = (cause: string) => metric(tg.gateway.admin, 'tollgate_ws_closed_total', { cause })

/** eth_call of code that returns `bytes` zero bytes (a state override: no deployment needed). */
function bigCall(id: number, bytes: number) {
  const code = `0x62${bytes.toString(16).padStart(6, '0')}6000f3` // PUSH3 bytes, PUSH1 0, RETURN
  const to = '0x' + '42'.repeat(20)
  return { jsonrpc: '2.0', id, method: 'eth_call', params: [{ to, data: '0x' }, 'latest', { [to]: { code } }] }
}

t.test('a client that stops reading is closed with 1008 and a reason; others are served meanwhile', async (t) => {
  const fast = await connectWs(url)
  t.teardown(() => fast.close())
  const slow = new WebSocket(url)
  await new Promise((resolve, reject) => slow.once('open', resolve).once('error', reject))
  const closed = new Promise<{ code: number; reason: string }>((resolve) => slow.once('close', (code, reason) => resolve({ code, reason: reason.toString() })))
  slow.pause() // reads nothing more: the gateway's buffer for it grows
  for (let i = 0; i < 40; i++) slow.send(JSON.stringify(bigCall(i, 200_000)))
  const answers: unknown[] = []
  const closedSlow = await until(async () => {
    answers.push(await fast.call({ jsonrpc: '2.0', id: answers.length, method: 'eth_chainId', params: [] }))
    return (await closedBy('slow-consumer')) === 1
  }, 30_000)
  t.ok(closedSlow, 'the gateway closed the slow client')
  t.ok(answers.length > 0 && answers.every((a: any) => a.result === '0x7a69'), `the other client was answered ${answers.length} times meanwhile`)
  slow.resume()
  const { code, reason } = await closed
  t.equal(code, 1008)
  t.match(reason, /^Slow consumer: over 65536 bytes unread/)
  t.equal((await fast.call({ jsonrpc: '2.0', id: 'after', method: 'eth_chainId', params: [] })).result, '0x7a69')
})

t.test('a half-open connection (no pong to our pings) is closed after idleTimeout; a quiet healthy one is not', async (t) => {
  const healthy = await connectWs(url) // undici answers pings by itself
  t.teardown(() => healthy.close())
  const raw = connect(tg.gateway.port, '127.0.0.1')
  raw.on('error', () => {})
  const rawClosed = new Promise<void>((resolve) => raw.once('close', () => resolve()))
  raw.write(
    `GET /ws/eth-1?apikey=${apiKey} HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
  )
  const head = await new Promise<string>((resolve) => raw.once('data', (d) => resolve(d.toString('latin1'))))
  t.match(head, /^HTTP\/1.1 101/)
  // From here the raw socket reads but never answers: like a peer that vanished without a FIN.
  // The 30 s is an outer bound, so that the test cannot hang on a socket never closed; what is
  // asserted is that the gateway closes it, not how soon.
  const outcome = await Promise.race([rawClosed.then(() => 'closed'), new Promise((r) => setTimeout(() => r('still open'), 30_000).unref())])
  t.equal(outcome, 'closed', 'closed by the gateway')
  t.ok(await until(async () => ((await closedBy('idle-or-error')) ?? 0) >= 1), 'counted as idle')
  t.equal((await healthy.call({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] })).result, '0x7a69', 'the healthy quiet one is still open')
})
