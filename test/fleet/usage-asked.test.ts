import { randomBytes } from 'node:crypto'
import t from 'tap'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { startAnvil } from '../../harness/anvil.js'
import { startNats } from '../../harness/nats-server.js'
import { HOUR_MS } from '../../src/store/records.js'
import { accountUsageView } from '../../src/usage/usage-view.js'
import { DashboardClient } from '../helpers/dashboard-client.js'
import { until } from '../helpers/eventually.js'
import { oneNetwork, rpc, startTestGateway } from '../helpers/gateway.js'

/*
 * Two gateways on one stream: A projects the fleet's usage, B does not (usage.project false). B's
 * dashboard shows an account's usage by asking A over NATS; with A gone, it says why it cannot.
 * B decides by its config, not by its store: until its projector skips usage events it still has
 * the rows, and the 503 once A stopped shows that it asked all the same.
 */
t.setTimeout(120_000)
const anvil = await startAnvil({ chainId: 31337 })
t.teardown(() => anvil.stop())
const nats = await startNats()
t.teardown(() => nats.stop())
const stream = `U${randomBytes(4).toString('hex')}`
const networks = oneNetwork([{ url: anvil.url }])
const a = await startTestGateway(t, { networks, nats: nats.url, stream, usageIntervalMs: 100, usageProject: true })
const b = await startTestGateway(t, { networks, nats: nats.url, stream, usageIntervalMs: 100, usageProject: false })

const onB = new DashboardClient(b.gateway.http)
const signedIn = await onB.signIn(privateKeyToAccount(generatePrivateKey()), 31337)
const accountId: string = signedIn.json.accountId
const CALLS = 7

/** The calls of the account's usage view, summed over its series. */
const callsIn = (view: { series: { requests: number[] }[] }): number => view.series.reduce((n, s) => n + s.requests.reduce((x, y) => x + y, 0), 0)

t.test("B's usage view is A's, asked over NATS", async (t) => {
  t.equal(signedIn.status, 200, JSON.stringify(signedIn.json))
  t.same((await onB.post('/api/plans', { planId: 'free-trial' })).json, { activated: true })
  const apiKey: string = (await onB.get('/api/me')).json.key.apiKey
  const call = () => rpc(a.url('eth-1'), { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }, { bearer: apiKey })
  // The key was issued on B: A serves it once its projection has it.
  t.ok(await until(async () => (await call()).status === 200), 'A serves the key issued on B')
  for (let i = 1; i < CALLS; i++) t.equal((await call()).status, 200)
  t.ok(await until(() => callsIn(accountUsageView(a.gateway.store, accountId, 24, Date.now())) === CALLS), `A's usage shows the ${CALLS} calls`)

  const onBoth = await onB.get('/api/usage?hours=24')
  t.equal(onBoth.status, 200, JSON.stringify(onBoth.json))
  t.equal(callsIn(onBoth.json), CALLS)
  // A's view of the same hours (B's `now` put the hours where they are).
  const lastHour = onBoth.json.from + 23 * HOUR_MS
  t.same(onBoth.json, accountUsageView(a.gateway.store, accountId, 24, lastHour), 'the same series and refusals as on A')
  t.match(onBoth.json.series, [{ network: 'eth-1', kind: 'full' }])
})

t.test('with A stopped, no instance projects usage: 503 USAGE_UNAVAILABLE, saying what to do', async (t) => {
  await a.stop()
  const res = await onB.get('/api/usage?hours=24')
  t.equal(res.status, 503, JSON.stringify(res.json))
  t.equal(res.json.error.code, 'USAGE_UNAVAILABLE')
  t.equal(res.json.error.details.reason, 'no answer')
  t.match(res.json.error.message, /does not keep usage itself.*within 2 s.*at least one instance with usage\.project true on the same event stream/)
})
