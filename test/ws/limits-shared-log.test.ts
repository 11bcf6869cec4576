import t from 'tap'
import { FakeClock } from '../helpers/fake-clock.js'
import { startAnvil } from '../../harness/anvil.js'
import { startNats } from '../../harness/nats-server.js'
import { startInProcessFleet } from '../helpers/in-process-fleet.js'
import { connectWs, tryUpgrade } from '../helpers/ws-client.js'
import { until } from '../helpers/metrics.js'

// Two gateway instances on one event log (a JetStream stream): a cooldown or a penalty that one
// of them decides is enforced by the other.
const anvil = await startAnvil()
const nats = await startNats()
t.teardown(async () => {
  await anvil.stop()
  await nats.stop()
})
const clock = new FakeClock()
const networks = { 'eth-1': { chainId: 31337, upstreams: [{ url: anvil.url, ws: anvil.wsUrl, kind: 'full' as const }] } }
const [one, two] = await startInProcessFleet(t, { instances: 2, networks, clock, nats: nats.url })
const { apiKey, keyId } = await one.createKey('tier-3')
const on = (g: typeof one) => `${g.wsUrl('eth-1')}?apikey=${apiKey}`
const call = (id: unknown) => ({ jsonrpc: '2.0', id, method: 'eth_chainId', params: [] })

t.test('a cooldown started on one instance blocks new connections on the other', async (t) => {
  t.ok(await until(() => two.gateway.store.keyById(keyId) !== undefined), 'the key reached the second instance')
  const open = await Promise.all(Array.from({ length: 15 }, () => connectWs(on(one))))
  t.teardown(() => Promise.all(open.map((c) => c.close())))
  t.equal((await tryUpgrade(on(one))).status, 429, 'the 16th within a second starts the cooldown on the first instance')
  t.ok(await until(() => (two.gateway.store.wsBlocks(keyId)?.cooldownUntil ?? 0) > clock.now()), 'the second instance projected it')
  const there = await tryUpgrade(on(two))
  t.equal(there.status, 429)
  t.equal(there.body.error.code, -32031)
  t.equal(there.headers['retry-after'], '60')
})

t.test('a penalty imposed on one instance refuses messages on the other', async (t) => {
  clock.advance(60_000)
  const here = await connectWs(on(one))
  const there = await connectWs(on(two))
  t.teardown(() => Promise.all([here.close(), there.close()]))
  t.equal((await there.call(call('before'))).result, '0x7a69')
  for (let i = 0; i < 21; i++) await here.call('{not json')
  t.equal((await here.call(call('x'))).error.code, -32032, 'penalised where decided')
  t.ok(await until(() => (two.gateway.store.wsBlocks(keyId)?.penaltyUntil ?? 0) > clock.now()), 'the second instance projected it')
  t.equal((await there.call(call('after'))).error.code, -32032, 'and refused there too')
})
