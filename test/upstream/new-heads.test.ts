import t from 'tap'
import type { Anvil } from '../../harness/anvil.js'
import { anvilGateway } from '../helpers/anvil-gateway.js'
import { rpc } from '../helpers/gateway.js'
import { metric, until } from '../helpers/metrics.js'
import { connectWs } from '../helpers/ws-client.js'

// A node with a WebSocket is followed by its newHeads: its head counts the moment it announces a
// block, not at the next head poll. The poll here is 10 minutes apart (only the first one, at
// start, happens during the test), so any head the gateway learns after start came from newHeads
// (or from an eth_blockNumber answer, which the test does not send until the end). Before this,
// the gateway knew only the poll's head and the node's own eth_blockNumber answers.
// A client's own newHeads subscription through the gateway is not disturbed by it.

const GENESIS = 1_700_000_000
const args = ['--no-mining', '--timestamp', String(GENESIS)]

const {
  anvils,
  tg,
  key: { apiKey },
} = await anvilGateway(t, { anvils: 2, names: ['a', 'b'], anvil: { args }, config: { health: { pollMs: 600_000 } } })
const [a, b] = anvils as [Anvil, Anvil]
const headOf = (node: string) => metric(tg.gateway.admin, 'tollgate_upstream_head_block', { node })

t.test('a block announced by a node is its head at once, between two polls', async (t) => {
  t.equal(await headOf('a'), 0, 'the poll at start saw block 0')
  const client = await connectWs(`${tg.wsUrl('eth-1')}?apikey=${apiKey}`)
  t.teardown(() => client.close())
  const sub = await client.call({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['newHeads'] })
  t.match(sub.result, /^0x[0-9a-f]+$/, "the client's own subscription")

  await a.rpc('evm_mine', [GENESIS + 1])
  t.ok(await until(async () => (await headOf('a')) === 1), "node a's head is 1 from its newHeads")
  t.equal(await headOf('b'), 0, 'node b has not announced one')
  await b.rpc('evm_mine', [GENESIS + 1])
  t.ok(await until(async () => (await headOf('b')) === 1), "node b's head follows its own announcement")

  t.ok(await until(async () => client.notifications(sub.result).length > 0), 'the client got a notification on its own subscription')
  t.same(
    client.notifications(sub.result).map((n) => n.params.result.number),
    ['0x1'],
    'block 1, once: the gateway subscription to the node is apart from the clients',
  )

  const answer = await rpc(tg.url('eth-1'), { jsonrpc: '2.0', id: 1, method: 'eth_getBlockByNumber', params: ['latest', false] }, { apiKey })
  t.equal(answer.json.result.number, '0x1', 'a latest read is served at the head both nodes announced')
})
