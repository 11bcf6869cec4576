import t from 'tap'
import { startAnvil } from '../../harness/anvil.js'
import type { NodeKind } from '../../src/core/node-kind.js'
import { ConsensusCalls } from '../../src/upstream/consensus-call.js'
import { NodesDisagree } from '../../src/upstream/errors.js'
import { MethodLearning } from '../../src/upstream/method-learning.js'
import { NodeChooser } from '../../src/upstream/node-choice.js'
import type { PoolView } from '../../src/upstream/pool-view.js'
import { systemClock } from '../../actors/runtime/clock.js'
import { waitFor } from '../helpers/eventually.js'
import { startFaultProxy } from '../helpers/fault-proxy.js'
import { nodeOn } from '../helpers/upstream-pool.js'

// The consensus call on its own, over real nodes without a gateway: one real anvil behind three
// proxies, one or two of which alter eth_getBalance as lying nodes would.

const anvil = await startAnvil()
t.teardown(() => anvil.stop())
const proxies = await Promise.all([0, 1, 2].map(() => startFaultProxy(anvil)))
t.teardown(() => Promise.all(proxies.map((p) => p.close())))
const add = (n: bigint) => (r: unknown) => `0x${(BigInt(r as string) + n).toString(16)}`
const [from] = (await anvil.rpc('eth_accounts')).result as string[]
const balance: string = (await anvil.rpc('eth_getBalance', [from, 'latest'])).result

function voting(names: string[]) {
  const nodes = names.map((name, i) => nodeOn(t, proxies[i].url, { name }))
  const view: PoolView = { network: 'eth-1', nodesOf: (_kind: NodeKind) => nodes, chooserOf: () => chooser, whyNone: () => 'none' }
  const chooser = new NodeChooser()
  return { calls: new ConsensusCalls(view, new MethodLearning(view, systemClock), systemClock), nodes }
}
const policy = (threshold: number) => ({
  participants: 3,
  agreement: 2,
  methods: new Set(['eth_getBalance']),
  disputeWindowMs: 600_000,
  disputeThreshold: threshold,
  sitOutMs: 3_600_000,
})

t.test('two honest nodes agree: their answer, the liar counted and, past the threshold, sitting out', async (t) => {
  t.teardown(() => proxies[2].clear())
  proxies[2].set('eth_getBalance', { alter: add(1n) })
  const { calls, nodes } = voting(['a', 'b', 'liar'])
  for (let i = 0; i < 2; i++) {
    const answer = await calls.call(policy(2), { kind: 'full', method: 'eth_getBalance', params: [from, 'latest'], timeoutMs: 5_000 })
    t.equal(JSON.parse(answer.text).result, balance, 'the honest balance')
    t.equal(answer.consensus, '2/3')
    // The liar's answer is counted once every node asked has answered.
    const liar = nodes[2]
    await waitFor(() => calls.disputesOf(liar).disputes > i, 'the liar’s answer counted')
  }
  t.same(calls.disputesOf(nodes[2]), { disputes: 2, sitOuts: 1 }, 'two disputes: it sits out')
  t.notOk(nodes[2].healthy(), 'and takes no call')
  t.equal(calls.counters.agreed, 2)
  t.ok(calls.counters.fanOut >= 4, `asked at least two nodes each call (${calls.counters.fanOut})`)
})

t.test('no two nodes agree: NodesDisagree, never one of the answers', async (t) => {
  t.teardown(() => Promise.all([proxies[1].clear(), proxies[2].clear()]))
  proxies[1].set('eth_getBalance', { alter: add(2n) })
  proxies[2].set('eth_getBalance', { alter: add(3n) })
  const { calls } = voting(['honest', 'plus-two', 'plus-three'])
  await t.rejects(calls.call(policy(5), { kind: 'full', method: 'eth_getBalance', params: [from, 'latest'], timeoutMs: 5_000 }), NodesDisagree)
  t.equal(calls.counters.disagreed, 1)
})
