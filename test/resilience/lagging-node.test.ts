import t from 'tap'
import { startAnvil } from '../helpers/anvil.js'
import { rpc, startTestGateway } from '../helpers/gateway.js'
import { until } from '../helpers/eventually.js'

// A node that falls behind the others (they mine, it does not) is taken out: clients never read
// its old chain. It comes back once it catches up.
const [a, b, c] = await Promise.all([startAnvil(), startAnvil(), startAnvil()])
t.teardown(() => Promise.all([a.stop(), b.stop(), c.stop()]))
const tg = await startTestGateway(t, {
  networks: {
    'eth-1': {
      chainId: 31337,
      upstreams: [
        { url: a.url, kind: 'full', name: 'a' },
        { url: b.url, kind: 'full', name: 'b' },
        { url: c.url, kind: 'full', name: 'c' },
      ],
    },
  },
  config: { health: { pollMs: 100, maxLagBlocks: 4 } },
})
const { apiKey } = await tg.createKey('tier-3')
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
