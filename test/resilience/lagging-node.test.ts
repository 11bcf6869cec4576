import t from 'tap'
import type { Anvil } from '../../harness/anvil.js'
import { anvilGateway } from '../helpers/anvil-gateway.js'
import { rpc } from '../helpers/gateway.js'
import { until } from '../helpers/eventually.js'

// A node that falls behind the others (they mine, it does not) is taken out: clients never read
// its old chain. It comes back once it catches up.
const {
  anvils,
  tg,
  key: { apiKey },
} = await anvilGateway(t, { anvils: 3, names: ['a', 'b', 'c'], nodeWs: false, config: { health: { pollMs: 100, maxLagBlocks: 4 } } })
const [a, b, c] = anvils as [Anvil, Anvil, Anvil]
const [nodeA] = tg.gateway.upstreams.pool('eth-1')!.nodes()
const blockNumber = async () =>
  parseInt((await rpc(tg.url('eth-1'), { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }, { apiKey })).json.result, 16)

t.test('a node 20 blocks behind is out, and no client reads from it', async (t) => {
  await Promise.all([b.rpc('anvil_mine', ['0x14']), c.rpc('anvil_mine', ['0x14'])])
  t.ok(await until(() => nodeA.outReason() === 'behind'), 'node a is out for being behind')
  t.ok((nodeA.lag() ?? 0) > 4, `node a is ${nodeA.lag()} blocks behind`)
  // Node a would answer 0: every answer of 20 came from a node at the head.
  const heads = await Promise.all(Array.from({ length: 12 }, blockNumber))
  t.same(new Set(heads), new Set([20]), 'every read comes from the nodes at the head')
  const metrics = await (await fetch(`${tg.gateway.admin}/metrics`)).text()
  t.match(metrics, /tollgate_upstream_out\{network="eth-1",node="a",kind="full",reason="behind"\} 1/)
  t.match(metrics, /tollgate_upstream_lag_blocks\{network="eth-1",node="a",kind="full"\} \d+/)
})

t.test('it comes back when it catches up', async (t) => {
  await a.rpc('anvil_mine', ['0x14'])
  t.ok(await until(() => nodeA.up()), 'node a is back in')
  t.equal(nodeA.lag(), 0)
})
