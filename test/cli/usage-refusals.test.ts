import t from 'tap'
import { startAnvil } from '../../harness/anvil.js'
import { runCli } from '../helpers/cli.js'
import { anvilAccount } from '../helpers/contracts.js'
import { DashboardClient } from '../helpers/dashboard-client.js'
import { rpc, TEST_SECRET } from '../helpers/gateway.js'
import { startGatewayProcess } from '../helpers/gateway-process.js'
import { until } from '../helpers/eventually.js'

// Refusals by rule end to end, as an operator and an owner see them: `tollgate start` as a process,
// a key restricted through the dashboard's API, calls refused by its method and contract rules,
// then the counts by rule in GET /api/usage and in `tollgate usage` (its own process, beside the
// gateway), equal to what the gateway answered.
t.setTimeout(240_000)
const env = { TOLLGATE_SECRET: TEST_SECRET }
const anvil = await startAnvil({ chainId: 31337 })
t.teardown(() => anvil.stop())
const gw = await startGatewayProcess(t, {
  config: { networks: { 'eth-1': { chainId: 31337, upstreams: [{ url: anvil.url, kind: 'full' }] } }, usage: { intervalMs: 200 } },
})
const owner = anvilAccount(4)
const created = await runCli(['accounts', 'create', '--config', gw.configPath, '--wallet', owner.address, '--plan', 'tier-3'], env)
if (created.code !== 0) throw new Error(`accounts create failed: ${created.stderr}`)
const { accountId, keyId, apiKey } = created.last as { accountId: string; keyId: string; apiKey: string }
const dashboard = new DashboardClient(gw.http)

const LISTED = '0x' + '11'.repeat(20)
const OTHER = '0x' + '22'.repeat(20)
/** Refusals as the gateway answered them, by the rule its message names; and the calls it served. */
const refused: Record<string, number> = {}
let served = 0
async function send(method: string, params: unknown[] = []): Promise<{ status: number; json: any }> {
  const answer = await rpc(gw.url('eth-1'), { jsonrpc: '2.0', id: 1, method, params }, { bearer: apiKey })
  const rule = /key's (method|contract|ip|user-agent) rule/.exec(answer.json?.error?.message ?? '')?.[1]
  if (answer.status === 403 && rule !== undefined) refused[rule] = (refused[rule] ?? 0) + 1
  if (answer.status === 200) served++
  return answer
}

t.test('a key restricted through the API refuses calls by its method and contract rules', async (t) => {
  t.equal((await dashboard.signIn(owner, 31337)).status, 200, 'the owner signs in')
  const me = await dashboard.get('/api/me')
  t.equal(me.json.accountId, accountId)
  const set = await dashboard.put('/api/keys/restrictions', { methods: ['eth_chainId', 'eth_call'], contracts: [LISTED] })
  t.equal(set.status, 200, JSON.stringify(set.json))
  t.ok(await until(async () => (await send('eth_blockNumber')).status === 403), 'the method rule reaches the gateway')
  t.equal((await send('eth_gasPrice')).json.error.code, -32002)
  const contract = await send('eth_call', [{ to: OTHER }, 'latest'])
  t.equal(contract.status, 403)
  t.match(contract.json.error.message, /contract rule/)
  t.equal((await send('eth_call', [{ to: LISTED }, 'latest'])).status, 200, 'inside both rules: served')
  t.ok(refused.method! >= 2 && refused.contract === 1, JSON.stringify(refused))
})

t.test('GET /api/usage: the refusals by rule, each once', async (t) => {
  let usage: any
  const calls = (u: any): number => (u?.series ?? []).reduce((n: number, s: any) => n + s.requests.reduce((a: number, b: number) => a + b, 0), 0)
  // Through the meter's interval, the log and the projection: bounded, the assertions say whether it came.
  await until(async () => {
    usage = (await dashboard.get('/api/usage?hours=2')).json
    return usage?.refused?.method >= refused.method! && usage?.refused?.contract >= refused.contract! && calls(usage) >= served
  }, 20_000)
  t.same(usage.refused, { method: refused.method, contract: refused.contract })
  t.equal(calls(usage), served, 'and the calls served, beside them')
})

t.test('tollgate usage: refused by rule in --json and in the table', async (t) => {
  const [json, table] = await Promise.all([
    runCli(['usage', '--config', gw.configPath, '--key', keyId, '--json'], env),
    runCli(['usage', '--config', gw.configPath], env),
  ])
  t.equal(json.code, 0, json.stderr)
  const line = JSON.parse(json.stdout.trim().split('\n')[0]!)
  t.same(line.refused, { method: refused.method, contract: refused.contract }, 'the refusals of the key')
  t.equal(line.requests, served, 'beside the calls served')
  t.equal(table.code, 0, table.stderr)
  const [header, row] = table.stdout.trimEnd().split('\n')
  t.match(header, /refused by rule$/)
  t.match(row, new RegExp(`method ${refused.method}, contract ${refused.contract}$`))
})
