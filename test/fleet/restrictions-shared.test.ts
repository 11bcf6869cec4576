import t from 'tap'
import { startNats } from '../../harness/nats-server.js'
import { startAnvils } from '../helpers/anvil-gateway.js'
import { oneNetwork, rpc } from '../helpers/gateway.js'
import { startInProcessFleet } from '../helpers/in-process-fleet.js'
import { within } from '../helpers/eventually.js'

// Two instances on one JetStream stream: a restriction set through one is enforced by the other.
// The time it took is reported, not asserted (the contract says within a second; how long it takes
// here is the speed of a shared machine); every wait has a bound of its own.
const [anvil] = await startAnvils(t, {})
const nats = await startNats()
t.teardown(() => nats.stop())
const networks = oneNetwork([{ url: anvil!.url }])
const [a, b] = await startInProcessFleet(t, { instances: 2, networks, nats: nats.url })
const key = await a.createKey('tier-3')
const call = { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }

t.test('a restriction set through one instance holds on the other, and its lifting too', async (t) => {
  t.ok((await within(10_000, async () => (await rpc(b.url('eth-1'), call, { apiKey: key.apiKey })).status === 200)) !== undefined, 'the key works on b')
  await a.restrictKey(key.accountId, { methods: ['eth_chainId'] })
  const took = await within(10_000, async () => (await rpc(b.url('eth-1'), call, { apiKey: key.apiKey })).status === 403)
  t.ok(took !== undefined, `b refuses eth_blockNumber ${took} ms after the restriction was set on a`)
  const refused = await rpc(b.url('eth-1'), call, { apiKey: key.apiKey })
  t.equal(refused.json.error.code, -32002)
  await b.restrictKey(key.accountId, {}, true)
  const back = await within(10_000, async () => (await rpc(a.url('eth-1'), call, { apiKey: key.apiKey })).status === 200)
  t.ok(back !== undefined, `a serves it again ${back} ms after b lifted the rule`)
})
