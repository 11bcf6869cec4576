import t from 'tap'
import { FakeClock } from '../helpers/fake-clock.js'
import { anvilGateway } from '../helpers/anvil-gateway.js'
import { startTestGateway, type TestGateway } from '../helpers/gateway.js'
import { connectWs, tryUpgrade, type WsClient } from '../helpers/ws-client.js'
import { openEventLog } from '../../src/events/open-log.js'
import type { TollgateEvent } from '../../src/events/types.js'
import { metric, until } from '../helpers/metrics.js'

// The WebSocket limits per key at their thresholds, against a real gateway whose key actors run
// on a fake clock: "within one second" is then exact, whatever the machine's load.
const clock = new FakeClock()
// Gateways restarted inside a subtest belong to the whole file, not to that subtest.
const root = t
// Each subtest makes its own key; a restart (startTestGateway on the same data folder) is on the same node.
const first = await anvilGateway(root, { clock, plan: null })
const { networks } = first
let tg: TestGateway = first.tg
const wsUrl = (key: string) => `${tg.wsUrl('eth-1')}?apikey=${key}`
const call = (id: unknown) => ({ jsonrpc: '2.0', id, method: 'eth_chainId', params: [] })

/** Events of the gateway's log (read after stopping it, so that the outbox has flushed). */
async function eventsOf(g: TestGateway): Promise<TollgateEvent[]> {
  const log = await openEventLog(g.config.events, g.config.dataDir)
  try {
    return (await log.read(1, 100_000)).map((s) => s.event)
  } finally {
    await log.close()
  }
}

t.test('50 concurrent connections; the 51st is refused with 429; closing one makes room', async (t) => {
  const { apiKey } = await tg.createKey('tier-3')
  const open: WsClient[] = []
  t.teardown(() => Promise.all(open.map((c) => c.close())))
  for (let i = 0; i < 50; i++) {
    open.push(await connectWs(wsUrl(apiKey)))
    clock.advance(100) // 10 a second: under the new-connection rate
  }
  const refused = await tryUpgrade(wsUrl(apiKey))
  t.equal(refused.status, 429)
  t.equal(refused.body.error.code, -32030)
  t.match(refused.body.error.message, /50 open at once/)
  await open.pop()!.close()
  // The gateway frees the slot when uWS reports the close; retry until it has (bounded).
  let again = await tryUpgrade(wsUrl(apiKey))
  for (let i = 0; i < 50 && again.status !== 101; i++) again = await tryUpgrade(wsUrl(apiKey))
  t.equal(again.status, 101, 'a slot is free again')
})

t.test('15 new connections in one second; the 16th starts a 60 s cooldown, held across a restart', async (t) => {
  const { apiKey, keyId } = await tg.createKey('tier-3')
  const open = await Promise.all(Array.from({ length: 15 }, () => connectWs(wsUrl(apiKey))))
  const sixteenth = await tryUpgrade(wsUrl(apiKey))
  t.equal(sixteenth.status, 429)
  t.equal(sixteenth.body.error.code, -32031)
  t.equal(sixteenth.headers['retry-after'], '60')
  t.match(sixteenth.body.error.message, /16 within a second/)
  clock.advance(30_000)
  const answers = await Promise.all(open.map((c, i) => c.call(call(i))))
  t.ok(
    answers.every((a: any) => a.result === '0x7a69'),
    'the open connections are not touched by the cooldown',
  )
  await Promise.all(open.map((c) => c.close()))
  const during = await tryUpgrade(wsUrl(apiKey))
  t.equal(during.status, 429, 'blocked during the cooldown, connections closed or not')
  t.equal(during.headers['retry-after'], '30')

  // Restart on the same data folder: the cooldown comes back from the event log's projection.
  await tg.stop()
  const events = await eventsOf(tg)
  const started = events.find((e) => e.type === 'WsCooldownStarted' && e.keyId === keyId)
  t.match(started, { reason: 'ws-connection-rate', connections: 16, windowMs: 1000, network: 'eth-1' })
  const refusals = events.filter((e) => e.type === 'WsLimited' && e.keyId === keyId && e.reason === 'ws-cooldown')
  t.equal(
    refusals.reduce((n, e) => n + (e.type === 'WsLimited' ? e.count : 0), 0),
    2,
    'the two refusals are counted in WsLimited',
  )
  tg = await startTestGateway(root, { networks, clock, dataDir: tg.dataDir })
  const afterRestart = await tryUpgrade(wsUrl(apiKey))
  t.equal(afterRestart.status, 429, 'still blocked after the restart')
  t.equal(afterRestart.headers['retry-after'], '30')
  clock.advance(30_000)
  t.equal((await tryUpgrade(wsUrl(apiKey))).status, 101, 'the cooldown is over')
})

t.test('500 messages a second plus 10%: 550 served, then -32005, and a flood beyond is dropped', async (t) => {
  const { apiKey } = await tg.createKey('tier-3')
  const ws = await connectWs(wsUrl(apiKey))
  t.teardown(() => ws.close())
  const sizes = [100, 100, 100, 100, 100, 50]
  const batches = await Promise.all(sizes.map((n, b) => ws.call(Array.from({ length: n }, (_, i) => call(b * 1000 + i)))))
  const served = batches.flat()
  t.equal(served.length, 550)
  t.ok(
    served.every((r: any) => r.result === '0x7a69'),
    'batches of 550 calls in all, each call counted: all served',
  )
  const throttled = await ws.call(call('over'))
  t.equal(throttled.error.code, -32005)
  t.equal(throttled.id, 'over')
  t.match(throttled.error.message, /500 messages per second/)
  t.ok(throttled.error.data.retryAfterMs > 0)
  // 499 more throttled answers fill this second's answers; what comes after is not answered.
  const answers = await Promise.all(Array.from({ length: 499 }, (_, i) => ws.call(call(`t${i}`))))
  t.ok(
    answers.every((a: any) => a.error?.code === -32005),
    '500 throttled answers',
  )
  ws.send(call('dropped'))
  // Move the clock only once the gateway has handled (dropped) it, which only its metrics can tell.
  t.ok(
    await until(async () => (await metric(tg.gateway.admin, 'tollgate_ws_messages_total', { network: 'eth-1', outcome: 'dropped' })) === 1),
    'counted as dropped',
  )
  clock.advance(1000)
  t.equal((await ws.call(call('next'))).result, '0x7a69', 'a second later, served again')
  t.notOk(
    ws.messages.some((m: any) => m.id === 'dropped'),
    'the message past the flood bound got no answer',
  )
})

t.test('20 malformed messages are tolerated; the 21st brings a 5-minute penalty', async (t) => {
  const { apiKey, keyId } = await tg.createKey('tier-3')
  const ws = await connectWs(wsUrl(apiKey))
  t.teardown(() => ws.close())
  for (let i = 0; i < 20; i++) t.equal((await ws.call('{not json')).error.code, -32700)
  t.equal((await ws.call(call('ok'))).result, '0x7a69', 'still served after 20')
  t.equal((await ws.call({ jsonrpc: '2.0', id: 'bad', method: 'admin_nodeInfo', params: [] })).error.code, -32601, 'the 21st (unsupported)')
  const refused = await ws.call(call('refused'))
  t.equal(refused.error.code, -32032)
  t.equal(refused.error.data.retryAfterMs, 300_000)
  t.match(refused.error.message, /malformed or unsupported/)
  clock.advance(299_999)
  t.equal((await ws.call(call('still'))).error.code, -32032, 'refused to the last ms')
  clock.advance(1)
  t.equal((await ws.call(call('back'))).result, '0x7a69', 'lifted after 5 minutes')
  await ws.close()
  await tg.stop()
  const penalty = (await eventsOf(tg)).find((e) => e.type === 'WsPenaltyImposed' && e.keyId === keyId)
  t.match(penalty, { reason: 'ws-bad-messages', badMessages: 21, windowMs: 60_000 })
  tg = await startTestGateway(root, { networks, clock, dataDir: tg.dataDir })
})

t.test('a message over the documented size is refused at its header: the connection ends at once', async (t) => {
  const { apiKey } = await tg.createKey('tier-3')
  const ws = await connectWs(wsUrl(apiKey))
  ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'web3_sha3', params: ['0x' + 'ab'.repeat(600_000)] }))
  const closed = await ws.closed
  // uWS closes the socket inside its frame parser, without a close frame (src/ws/ws-server.ts).
  t.equal(closed.code, 1006)
})
