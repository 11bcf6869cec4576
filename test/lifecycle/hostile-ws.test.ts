import t, { type Test } from 'tap'
import WebSocket from 'ws'
import { anvilGateway } from '../helpers/anvil-gateway.js'
import { rpc } from '../helpers/gateway.js'
import { connectWs } from '../helpers/ws-client.js'
import { until } from '../helpers/metrics.js'

// Hostile input over WebSocket against a real gateway and a real anvil, with the `ws` library as
// the client (it sends frames undici's WebSocket will not: invalid UTF-8 in a text frame). Each
// attack ends in a clear close code or a clear JSON-RPC error, and other clients are served.

// The Private Node plan has no message rate, so 1,000 messages at once meet only the subscription limit.
const {
  tg,
  key: { apiKey },
  url,
} = await anvilGateway(t, { anvil: { chainId: 1 }, plan: 'private' })
const wsUrl = `${tg.wsUrl('eth-1')}?apikey=${apiKey}`

/** A normal call over HTTP and over another WebSocket: both answered with anvil's chain id. */
async function served(t: Test, when: string): Promise<void> {
  const r = await rpc(url, { jsonrpc: '2.0', id: 'normal', method: 'eth_chainId', params: [] }, { apiKey })
  t.same([r.status, r.json], [200, { jsonrpc: '2.0', id: 'normal', result: '0x1' }], `an HTTP call ${when}`)
  const ws = await connectWs(wsUrl)
  t.same(
    await ws.call({ jsonrpc: '2.0', id: 'normal', method: 'eth_chainId', params: [] }),
    { jsonrpc: '2.0', id: 'normal', result: '0x1' },
    `a WebSocket call ${when}`,
  )
  await ws.close()
}

function open(): Promise<{ ws: WebSocket; closed: Promise<{ code: number; reason: string }>; messages: any[] }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(wsUrl)
    const messages: any[] = []
    const closed = new Promise<{ code: number; reason: string }>((r) => ws.on('close', (code, reason) => r({ code, reason: reason.toString() })))
    ws.on('message', (data) => messages.push(JSON.parse(data.toString())))
    ws.on('error', () => {})
    ws.once('open', () => resolve({ ws, closed, messages }))
    ws.once('unexpected-response', () => reject(new Error('upgrade refused')))
  })
}

t.test('a 10 MB frame is refused at its header, before any of it is read; others are served', async (t) => {
  const c = await open()
  c.ws.send(Buffer.alloc(10 * 1024 * 1024, 0x20), { binary: false })
  const [closed] = await Promise.all([c.closed, served(t, 'during the attack')])
  // uWS closes the socket inside its frame parser, without a close frame: the client sees 1006.
  t.equal(closed.code, 1006)
  t.same(c.messages, [], 'nothing was answered for it')
  await served(t, 'after it')
})

t.test('invalid UTF-8 in a text frame ends the connection at once; others are served', async (t) => {
  const c = await open()
  c.ws.send(Buffer.from('{"jsonrpc":"2.0","id":"\xff","method":"eth_chainId","params":[]}', 'latin1'), { binary: false })
  const closed = await c.closed
  // RFC 6455 (8.1) says to fail the connection; uWebSockets.js does so before the gateway sees
  // the frame, by closing the socket without a close frame, so the client reports 1006, not 1007.
  t.equal(closed.code, 1006)
  t.same(c.messages, [], 'nothing was answered for it')
  await served(t, 'after it')
})

t.test('in a binary frame, bytes that are not UTF-8 are a JSON-RPC error and the connection stays', async (t) => {
  const c = await open()
  t.teardown(() => c.ws.terminate())
  c.ws.send(
    Buffer.from('[{"jsonrpc":"2.0","id":"\xff","method":"eth_chainId","params":[]},{"jsonrpc":"2.0","id":2,"method":"eth_chainId","params":[]}]', 'latin1'),
    { binary: true },
  )
  await until(() => c.messages.length === 1)
  t.same(c.messages[0], [
    {
      jsonrpc: '2.0',
      id: null,
      error: {
        code: -32600,
        message: 'Invalid Request: the id is not valid UTF-8, so it cannot be echoed; JSON text must be UTF-8 (RFC 8259); send the body encoded as UTF-8',
      },
    },
    { jsonrpc: '2.0', id: 2, result: '0x1' },
  ])
  t.equal(c.ws.readyState, WebSocket.OPEN)
})

t.test('1,000 subscriptions on one connection: 100 are made, the rest get -32033', async (t) => {
  const c = await open()
  t.teardown(() => c.ws.terminate())
  for (let i = 0; i < 1000; i++) c.ws.send(JSON.stringify({ jsonrpc: '2.0', id: i, method: 'eth_subscribe', params: ['newHeads'] }))
  const answered = await until(() => c.messages.filter((m) => 'id' in m).length === 1000, 30_000)
  t.ok(answered, 'every eth_subscribe was answered')
  const answers = c.messages.filter((m) => 'id' in m)
  const made = answers.filter((m) => typeof m.result === 'string')
  const refused = answers.filter((m) => m.error !== undefined)
  t.equal(made.length, 100, 'ws.maxSubscriptionsPerConnection (100) subscriptions')
  t.equal(refused.length, 900)
  t.same(new Set(refused.map((m) => m.error.code)), new Set([-32033]))
  t.match(
    refused[0].error.message,
    /^Too many subscriptions: this connection holds 100, at most 100 are allowed per connection \(ws\.maxSubscriptionsPerConnection\); unsubscribe some, or open another connection$/,
  )
  // Unsubscribing frees a place.
  c.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 'un', method: 'eth_unsubscribe', params: [made[0].result] }))
  await until(() => c.messages.some((m) => m.id === 'un'))
  t.same(
    c.messages.find((m) => m.id === 'un'),
    { jsonrpc: '2.0', id: 'un', result: true },
  )
  c.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 'again', method: 'eth_subscribe', params: ['newHeads'] }))
  await until(() => c.messages.some((m) => m.id === 'again'))
  t.type(c.messages.find((m) => m.id === 'again').result, 'string', 'a place freed is taken again')
  await served(t, 'beside it')
})
