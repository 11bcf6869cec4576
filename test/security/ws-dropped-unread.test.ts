import t from 'tap'
import { FakeClock } from '../helpers/fake-clock.js'
import { anvilGateway } from '../helpers/anvil-gateway.js'
import { connectWs } from '../helpers/ws-client.js'
import { openEventLog } from '../../src/events/open-log.js'
import { metric, until } from '../helpers/metrics.js'

// A WebSocket message that will be dropped (the key past its rate, its throttle answers spent) is
// dropped before it is parsed, on a real gateway and anvil whose key actors run on a fake clock.
// Before, every message of a flood was parsed whole (up to ws.maxMessageBytes of JSON) and then
// thrown away. What shows that a dropped batch was not read is its count in WsLimited: reading it
// is the only way to know that it holds 100 calls, and before each dropped batch counted 100.

const clock = new FakeClock()
// Each subtest makes its own key.
const { tg } = await anvilGateway(t, { clock, plan: null })
const call = (id: unknown) => ({ jsonrpc: '2.0', id, method: 'eth_chainId', params: [] })
const batch = (from: number) => Array.from({ length: 100 }, (_, i) => call(from + i))
const DROPPED = 10

t.test('past the rate with no answer left, batches are dropped unread', async (t) => {
  const { apiKey, keyId } = await tg.createKey('tier-3') // 500 messages a second, 550 at once, 500 throttle answers
  const ws = await connectWs(`${tg.wsUrl('eth-1')}?apikey=${apiKey}`)
  t.teardown(() => ws.close())
  const served = (await Promise.all([0, 1, 2, 3, 4].map((b) => ws.call(batch(b * 1000))))).flat()
  served.push(...(await ws.call(batch(5000).slice(0, 50))))
  t.equal(served.filter((r: any) => r.result === '0x7a69').length, 550, 'the burst is served')
  const throttled = await Promise.all(Array.from({ length: 500 }, (_, i) => ws.call(call(`t${i}`))))
  t.ok(
    throttled.every((a: any) => a.error?.code === -32005),
    'the 500 throttle answers are spent',
  )
  for (let i = 0; i < DROPPED; i++) ws.send(batch(10_000 + i * 100))
  t.ok(
    await until(async () => (await metric(tg.gateway.admin, 'tollgate_ws_messages_total', { network: 'eth-1', outcome: 'dropped' })) === DROPPED),
    `the ${DROPPED} batches are dropped`,
  )
  clock.advance(1000)
  t.equal((await ws.call(call('next'))).result, '0x7a69', 'a second later, served again')
  t.notOk(
    ws.messages.flat().some((m: any) => typeof m.id === 'number' && m.id >= 10_000),
    'the dropped batches got no answer',
  )
  await ws.close()
  await tg.stop()
  const log = await openEventLog(tg.config.events, tg.config.dataDir)
  t.teardown(() => log.close())
  const events = (await log.read(1, 100_000)).map((s) => s.event)
  const dropped = events.filter((e) => e.type === 'WsLimited' && e.keyId === keyId && e.reason === 'ws-messages-dropped')
  t.equal(
    dropped.reduce((n, e) => n + (e.type === 'WsLimited' ? e.count : 0), 0),
    DROPPED,
    'each dropped batch counts one: its 100 calls were never read',
  )
})
