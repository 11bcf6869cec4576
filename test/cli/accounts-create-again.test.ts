import t from 'tap'
import { randomBytes } from 'node:crypto'
import { startAnvil } from '../../harness/anvil.js'
import { runCli } from '../helpers/cli.js'
import { TEST_SECRET } from '../helpers/gateway.js'
import { startGatewayProcess } from '../helpers/gateway-process.js'
import { startNats } from '../../harness/nats-server.js'
import { until } from '../helpers/eventually.js'

// `tollgate accounts create` run a second time for a wallet. docs/operations.md calls it
// idempotent (run the commands of a lost window again), but it revoked the account's key and
// restarted its plan period: the apps using the key stopped. Now it changes nothing and says so.
// The command line as an operator runs it, beside a real gateway process on a real nats-server.

const anvil = await startAnvil({ chainId: 31337 })
t.teardown(() => anvil.stop())
const nats = await startNats()
t.teardown(() => nats.stop())
const gw = await startGatewayProcess(t, {
  config: {
    events: { nats: nats.url, stream: `T${randomBytes(4).toString('hex')}` },
    networks: { 'eth-1': { chainId: 31337, upstreams: [{ url: anvil.url, kind: 'full' }] } },
  },
})
const create = (wallet: string, plan: string) =>
  runCli(['accounts', 'create', '--config', gw.configPath, '--wallet', wallet, '--plan', plan], { TOLLGATE_SECRET: TEST_SECRET })
const status = async (apiKey: string) =>
  (
    await fetch(gw.url('eth-1'), {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}',
    })
  ).status

t.test('a second `accounts create` for a wallet changes nothing, says so, and the key keeps working', async (t) => {
  const wallet = `0x${randomBytes(20).toString('hex')}`
  const first = await create(wallet, 'tier-3')
  t.equal(first.code, 0, first.stderr)
  t.ok(await until(async () => (await status(first.last.apiKey)) === 200), 'the key works')

  const second = await create(wallet, 'free-trial')
  t.equal(second.code, 0, `run again it succeeds: ${second.stderr}`)
  t.same(
    { accountId: second.last.accountId, keyId: second.last.keyId, planId: second.last.planId, exists: second.last.exists, apiKey: second.last.apiKey },
    { accountId: first.last.accountId, keyId: first.last.keyId, planId: 'tier-3', exists: true, apiKey: undefined },
    'the same account, its key and plan; no new key',
  )
  t.match(second.last.note, /nothing was changed.*tollgate keys regenerate --config .* --account /)
  t.match(second.stderr, /exists/, 'and on stderr, for a person')
  const events = await runCli(['events', '--config', gw.configPath], { TOLLGATE_SECRET: TEST_SECRET })
  const types = events.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l))
    .filter((e) => e.accountId === first.last.accountId && e.type !== 'UsageRecorded')
    .map((e) => e.type)
  t.same(types, ['AccountCreated', 'PlanActivated', 'NodesSelected', 'KeyIssued'], 'no second plan period, no revocation')
  t.equal(await status(first.last.apiKey), 200, 'the key still works')
})
