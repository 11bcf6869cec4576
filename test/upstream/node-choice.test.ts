import t from 'tap'
import type { Clock } from '../../actors/runtime/clock.js'
import type { UpstreamNode } from '../../src/upstream/node.js'
import { NodeChooser, PROBE_EVERY, scoreOf } from '../../src/upstream/node-choice.js'
import { METHOD_SET_ASIDE_MS } from '../../src/upstream/methods-lacking.js'
import { nodeOn } from '../helpers/upstream-pool.js'

// The choice of a node, with nothing sent: nodes whose latencies, heads and lacking methods the
// test sets as the pool would learn them. A fake clock for the methods set aside.

let now = 0
const clock: Clock = { now: () => now }

function node(name: string, opts: { ms?: number; head?: number } = {}): UpstreamNode {
  // Never called: the address is only parsed.
  const n = nodeOn(t, 'http://127.0.0.1:9', { name, health: { clock } })
  if (opts.ms !== undefined) for (let i = 0; i < 30; i++) n.latency.record(opts.ms)
  if (opts.head !== undefined) n.observeHead(opts.head, 0)
  return n
}

function picks(chooser: NodeChooser, nodes: UpstreamNode[], calls: number, opts = {}): Record<string, number> {
  const out: Record<string, number> = {}
  for (let i = 0; i < calls; i++) {
    const c = chooser.choose(nodes, new Set(), { mayProbe: true, ...opts })!
    out[c.node.name] = (out[c.node.name] ?? 0) + 1
  }
  return out
}

t.test('nodes alike share the calls in turn', async (t) => {
  const nodes = [node('a', { ms: 1 }), node('b', { ms: 1.2 }), node('c', { ms: 0.9 })]
  t.same(picks(new NodeChooser(), nodes, 300), { a: 100, b: 100, c: 100 })
})

t.test('a slow node gets only the probes, each hedged to the best node', async (t) => {
  const fast = node('fast', { ms: 1 })
  const slow = node('slow', { ms: 300 })
  const chooser = new NodeChooser()
  const choices = Array.from({ length: 10 * PROBE_EVERY }, () => chooser.choose([fast, slow], new Set(), { mayProbe: true })!)
  const probes = choices.filter((c) => c.node === slow)
  t.equal(probes.length, 10, `1 call in ${PROBE_EVERY} probes the slow node`)
  t.ok(
    probes.every((c) => c.probe && c.best === fast),
    'each probe is marked, with the fast node to hedge to',
  )
  t.ok(
    choices.filter((c) => c.node === fast).every((c) => !c.probe),
    'the others are ordinary calls',
  )
  t.ok(scoreOf(slow)! > scoreOf(fast)!, 'the scores say which is better')
})

t.test('calls that may not probe (transactions, batches) go to the best nodes only', async (t) => {
  const fast = node('fast', { ms: 1 })
  const slow = node('slow', { ms: 300 })
  t.same(picks(new NodeChooser(), [fast, slow], 5 * PROBE_EVERY, { mayProbe: false }), { fast: 5 * PROBE_EVERY })
})

t.test('a node behind the highest head gets calls only when no node at the head is left', async (t) => {
  const top = node('top', { ms: 5, head: 110 })
  const late = node('late', { ms: 1, head: 105 })
  const chooser = new NodeChooser()
  t.same(picks(chooser, [top, late], 50), { top: 50 }, 'faster, but behind: passed over')
  const c = chooser.choose([top, late], new Set([top]), { mayProbe: true })!
  t.equal(c.node, late, 'the only one left is tried')
})

t.test('a call naming a block goes to a node that has reached it', async (t) => {
  const a = node('a', { ms: 1, head: 100 })
  const b = node('b', { ms: 1, head: 100 })
  b.sawHead(103)
  t.same(picks(new NodeChooser(), [a, b], 20, { minBlock: 102 }), { b: 20 }, 'only b has block 102')
  t.same(picks(new NodeChooser(), [a, b], 20, { minBlock: 200 }), { b: 20 }, 'a block no node has: the highest head')
})

t.test('a method a node lacks is set aside on it, then probed again', async (t) => {
  now = 0
  const a = node('a', { ms: 1 })
  const b = node('b', { ms: 1 })
  a.lacking.lacks('debug_traceTransaction')
  t.same(picks(new NodeChooser(), [a, b], 20, { method: 'debug_traceTransaction' }), { b: 20 }, 'the other node serves it')
  t.same(picks(new NodeChooser(), [a, b], 20, { method: 'eth_call' }), { a: 10, b: 10 }, 'other methods as before')
  b.lacking.lacks('debug_traceTransaction')
  t.same(picks(new NodeChooser(), [a, b], 20, { method: 'debug_traceTransaction' }), { a: 10, b: 10 }, 'every node lacks it: the nodes say so')
  now = METHOD_SET_ASIDE_MS
  t.equal(a.lacking.has('debug_traceTransaction'), false, 'after the set-aside time the node is asked again')
})

t.test('a node whose set-aside time has passed gets the next call, however it scores', async (t) => {
  now = 0
  // The node that lacked the method is far slower at heavy calls (one slow answer is all its
  // heavy window holds): by score it never gets a heavy call, and heavy calls are not probes.
  const lacked = node('lacked', { ms: 1 })
  for (let i = 0; i < 30; i++) lacked.heavyLatency.record(500)
  const serves = node('serves', { ms: 1 })
  for (let i = 0; i < 30; i++) serves.heavyLatency.record(30)
  lacked.lacking.lacks('debug_traceTransaction')
  const heavy = { method: 'debug_traceTransaction', heavy: true, mayProbe: false }
  t.same(picks(new NodeChooser(), [lacked, serves], 20, heavy), { serves: 20 }, 'set aside: the other node')
  now = METHOD_SET_ASIDE_MS
  t.same(picks(new NodeChooser(), [lacked, serves], 20, heavy), { lacked: 1, serves: 19 }, 'past its time: one call probes it, then by score')
})

t.test('a method set aside never sends its calls to a node behind the head while one at the head is left', async (t) => {
  now = 0
  const head1 = node('head1', { ms: 1, head: 100 })
  const head2 = node('head2', { ms: 1, head: 100 })
  const behind = node('behind', { ms: 1, head: 99 })
  // Set aside (rightly or not) on both nodes at the head: they are still asked first (each says
  // "not found" at once if it lacks it, and the pool asks on), never the node a block behind.
  head1.lacking.lacks('eth_call')
  head2.lacking.lacks('eth_call')
  t.same(picks(new NodeChooser(), [head1, head2, behind], 20, { method: 'eth_call' }), { head1: 10, head2: 10 })
  // Among the nodes at the head, the set-aside still counts.
  head2.lacking.clear()
  t.same(picks(new NodeChooser(), [head1, head2, behind], 20, { method: 'eth_call' }), { head2: 20 })
})

t.test('a node not measured yet shares the calls, hedged to the best', async (t) => {
  const known = node('known', { ms: 1 })
  const fresh = node('fresh')
  const chooser = new NodeChooser()
  const choices = Array.from({ length: 20 }, () => chooser.choose([known, fresh], new Set(), { mayProbe: true })!)
  const toFresh = choices.filter((c) => c.node === fresh)
  t.equal(toFresh.length, 10, 'half the calls measure it')
  t.ok(
    toFresh.every((c) => c.probe && c.best === known),
    'each hedged to the measured node',
  )
})

t.test('heavy calls are scored by heavy calls: a node slow at traces still gets the balance reads', async (t) => {
  // a answers balances in 1 ms and traces in 900 ms (busy, or a weaker disk); b: 1 ms and 40 ms.
  const a = node('a', { ms: 1 })
  const b = node('b', { ms: 1 })
  for (let i = 0; i < 30; i++) {
    a.heavyLatency.record(900)
    b.heavyLatency.record(40)
  }
  t.same(picks(new NodeChooser(), [a, b], 200, { mayProbe: false }), { a: 100, b: 100 }, 'ordinary calls: alike, shared')
  t.same(picks(new NodeChooser(), [a, b], 200, { mayProbe: false, heavy: true }), { b: 200 }, 'heavy calls: to the node fast at them')
  t.ok(scoreOf(a, true)! > scoreOf(b, true)! && scoreOf(a)! === scoreOf(b)!, 'one node, two scores')
  const fresh = node('fresh', { ms: 3 })
  t.equal(scoreOf(fresh, true), scoreOf(fresh), 'a node not measured on heavy calls is judged by its ordinary ones')
})
