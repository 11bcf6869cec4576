import t from 'tap'
import { startAnvil } from '../../harness/anvil.js'
import { Hedging } from '../../src/upstream/hedged-call.js'
import { startFaultProxy } from '../helpers/fault-proxy.js'
import { nodeOn } from '../helpers/upstream-pool.js'

// Hedging on its own: when an attempt is hedged (the delay), and that the second node's answer
// wins when the first node is slow, against a real anvil behind two proxies (one slow).

const anvil = await startAnvil()
t.teardown(() => anvil.stop())
const slow = await startFaultProxy(anvil)
const quick = await startFaultProxy(anvil)
t.teardown(() => Promise.all([slow.close(), quick.close()]))
slow.set('eth_chainId', { delayMs: 2_000 })

const node = (name: string, url: string, ms?: number, samples = 30) => {
  const n = nodeOn(t, url, { name })
  if (ms !== undefined) for (let i = 0; i < samples; i++) n.latency.record(ms)
  return n
}

t.test('the delay: never for a pinned call or a non-read; a probe after the best p95; reads when hedging is on', async (t) => {
  const h = new Hedging()
  const best = node('best', quick.url, 10)
  const other = node('other', slow.url, 50)
  const hedge = { minDelayMs: 20, maxDelayMs: 500 }
  t.equal(h.delayFor({ node: other, best, probe: false }, { read: true, hedge, node: 'other' }), undefined, 'pinned to a node')
  t.equal(h.delayFor({ node: other, best, probe: false }, { read: false, hedge }), undefined, 'not a read')
  t.equal(h.delayFor({ node: other, best, probe: true }, { read: true }), 10, 'a probe: the best node’s p95, hedging off or on')
  t.equal(h.delayFor({ node: other, best, probe: false }, { read: true }), undefined, 'hedging off')
  t.equal(h.delayFor({ node: other, best, probe: false }, { read: true, hedge }), 20, 'the p95, no sooner than minDelayMs')
  const young = node('young', quick.url, 10, 5)
  t.equal(h.delayFor({ node: other, best: young, probe: false }, { read: true, hedge }), 500, 'a best node with few samples: the longest wait')
})

t.test('the second node answers first: its answer wins, counted', async (t) => {
  const h = new Hedging()
  const first = node('first', slow.url)
  const second = node('second', quick.url)
  const tried = new Set([first])
  const answer = await h.run({ node: first, best: first, probe: false }, { method: 'eth_chainId', params: [], read: true }, 5_000, 50, tried, () => second)
  t.equal(answer.node, 'second')
  t.match(answer.text, /"result":"0x7a69"/)
  t.same(h.counters, { started: 1, won: 1 })
  t.ok(tried.has(second), 'the hedge’s node is tried')
})

t.test('no other node: the first one’s answer, no hedge', async (t) => {
  const h = new Hedging()
  const first = node('alone', quick.url)
  const answer = await h.run(
    { node: first, best: first, probe: false },
    { method: 'eth_chainId', params: [], read: true },
    5_000,
    1,
    new Set([first]),
    () => undefined,
  )
  t.equal(answer.node, 'alone')
  t.same(h.counters, { started: 0, won: 0 })
})
