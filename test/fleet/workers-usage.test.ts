import { join } from 'node:path'
import t from 'tap'
import { startAnvil } from '../../harness/anvil.js'
import { usageSkipped } from '../../src/projections/usage-mode.js'
import { StateStore } from '../../src/store/state-store.js'
import { usageTotals } from '../../src/usage/usage-queries.js'
import { runCli, within } from '../helpers/cli.js'
import { anvilAccount } from '../helpers/contracts.js'
import { DashboardClient } from '../helpers/dashboard-client.js'
import { chainIdCall, TEST_SECRET } from '../helpers/gateway.js'
import { startWorkersGateway } from '../helpers/gateway-process.js'

// `workers: 2` without NATS: worker 0 alone projects usage (each worker has a store of its own);
// worker 1 reads past it and asks worker 0, through the supervisor, for the dashboard's view.
t.setTimeout(180_000)
const anvil = await startAnvil()
t.teardown(() => anvil.stop())
const { gateway: gw } = await startWorkersGateway(t, {
  workers: 2,
  config: { networks: { 'eth-1': { chainId: 31337, upstreams: [{ url: anvil.url, kind: 'full' }] } }, usage: { intervalMs: 200 } },
})
const owner = anvilAccount(4)
const created = await runCli(['accounts', 'create', '--config', gw.configPath, '--wallet', owner.address, '--plan', 'tier-3'], { TOLLGATE_SECRET: TEST_SECRET })
if (created.code !== 0) throw new Error(`accounts create failed: ${created.stderr}`)
const { accountId, apiKey } = created.last as { accountId: string; apiKey: string }

const CALLS = 30

t.test("the dashboard shows the account's calls, whichever worker serves it", async (t) => {
  t.not(await within(15_000, async () => (await chainIdCall(gw.url('eth-1'), apiKey)).status === 200), undefined, 'the key is served')
  for (let i = 1; i < CALLS; i++) t.equal((await chainIdCall(gw.url('eth-1'), apiKey)).status, 200)
  const dashboard = new DashboardClient(gw.http)
  t.equal((await dashboard.signIn(owner, 31337)).status, 200)
  const requests = async (): Promise<number> => {
    const r = await dashboard.call('GET', '/api/usage?hours=1')
    return r.status === 200 ? (r.json.series as Array<{ requests: number[] }>).reduce((sum, s) => sum + s.requests.reduce((a, b) => a + b, 0), 0) : -1
  }
  t.not(await within(15_000, async () => (await requests()) === CALLS), undefined, `GET /api/usage counts the ${CALLS} calls`)
})

t.test("worker 0's store holds the usage; worker 1's skipped it", async (t) => {
  gw.signal('SIGTERM')
  await gw.exited
  const stores = [0, 1].map((i) => StateStore.open(join(gw.dataDir, 'workers', String(i), 'state')))
  t.teardown(() => {
    for (const s of stores) s.close()
  })
  t.notOk(usageSkipped(stores[0]!), 'worker 0 projects usage')
  t.equal(usageTotals(stores[0]!, { accountId }).requests, CALLS, "worker 0's store has every worker's usage")
  t.ok(usageSkipped(stores[1]!), 'worker 1 reads past usage')
  t.equal(usageTotals(stores[1]!, { accountId }).requests, 0)
  t.ok(stores[1]!.account(accountId), 'worker 1 still projects accounts')
})
