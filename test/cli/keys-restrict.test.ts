import t from 'tap'
import { anvilGateway } from '../helpers/anvil-gateway.js'
import { rpc, TEST_SECRET } from '../helpers/gateway.js'
import { runCli, within } from '../helpers/cli.js'

// `tollgate keys restrict` against a running gateway that shares its event log, and behind a
// trusted proxy the client IP of the IP rule is the last X-Forwarded-For entry.
const { tg, url, key } = await anvilGateway(t, { nodeWs: false, config: { trustProxy: true } })
const env = { TOLLGATE_SECRET: TEST_SECRET }
const call = (method: string) => ({ jsonrpc: '2.0', id: 1, method, params: [] })
const restrict = (...args: string[]) => runCli(['keys', 'restrict', '--config', tg.configPath, '--account', key.accountId, ...args], env)

t.test('restrictions set on the command line reach the running gateway; options not given are kept', async (t) => {
  const set = await restrict('--methods', 'eth_chainId,eth_blockNumber', '--ips', '203.0.113.0/24', '--ips', '2001:db8::/32')
  t.equal(set.code, 0, set.stderr)
  t.same(set.last, { accountId: key.accountId, restrictions: { methods: ['eth_chainId', 'eth_blockNumber'], ips: ['203.0.113.0/24', '2001:db8::/32'] } })
  const from = (ip: string) => ({ apiKey: key.apiKey, headers: { 'x-forwarded-for': `10.9.9.9, ${ip}` } })
  const took = await within(10_000, async () => (await rpc(url, call('eth_chainId'), from('198.51.100.1'))).status === 403)
  t.ok(took !== undefined, `refused from another address after ${took} ms`)
  t.match((await rpc(url, call('eth_chainId'), from('198.51.100.1'))).json.error.message, /IP rule.*came from 198\.51\.100\.1/)
  t.equal((await rpc(url, call('eth_chainId'), from('203.0.113.9'))).status, 200, 'the last X-Forwarded-For entry is the client')
  t.equal(
    (await rpc(url, call('eth_chainId'), { apiKey: key.apiKey, headers: { 'x-forwarded-for': '203.0.113.9, 198.51.100.1' } })).status,
    403,
    'an earlier entry, which the client may forge, is not',
  )
  const more = await restrict('--methods', 'eth_chainId')
  t.same(more.last.restrictions, { methods: ['eth_chainId'], ips: ['203.0.113.0/24', '2001:db8::/32'] }, 'the IP rule is kept')
  const lifted = await restrict('--ips', '')
  t.same(lifted.last.restrictions, { methods: ['eth_chainId'] }, "--ips '' lifts the IP rule")
  const cleared = await restrict('--clear')
  t.same(cleared.last.restrictions, {})
  t.ok((await within(10_000, async () => (await rpc(url, call('eth_gasPrice'), { apiKey: key.apiKey })).status === 200)) !== undefined, 'served again')
})

t.test('bad input is refused with the entry named, and nothing is changed', async (t) => {
  const bad = await restrict('--contracts', '0x1234')
  t.equal(bad.code, 1)
  t.match(bad.stderr, /bad key restrictions: contracts: "0x1234" is not an address/)
  const both = await restrict('--methods', 'eth_call', '--deny-methods', 'eth_sign')
  t.equal(both.code, 1)
  t.match(both.stderr, /not both/)
  const none = await restrict()
  t.equal(none.code, 2)
  t.match(none.stderr, /give at least one rule, or --clear/)
  const unknown = await runCli(['keys', 'restrict', '--config', tg.configPath, '--account', 'acc_nope', '--methods', 'eth_call'], env)
  t.equal(unknown.code, 1)
  t.match(unknown.stderr, /unknown account "acc_nope"/)
  t.equal((await rpc(url, call('eth_gasPrice'), { apiKey: key.apiKey })).status, 200, 'still unrestricted')
})
