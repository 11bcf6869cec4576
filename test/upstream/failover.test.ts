import t from 'tap'
import { startAnvil } from '../../harness/anvil.js'
import { freePort } from '../../harness/free-port.js'
import type { UpstreamNodeOptions } from '../../src/upstream/node.js'
import type { UpstreamPool } from '../../src/upstream/pool.js'
import { scoreOf } from '../../src/upstream/node-choice.js'
import { NoHealthyUpstream, UpstreamTimeout, UpstreamTransportError } from '../../src/upstream/errors.js'
import { poolOn } from '../helpers/upstream-pool.js'

// Two real anvil nodes of kind `full` with different chain ids, so an answer tells who gave it.
const [a, b] = await Promise.all([startAnvil({ chainId: 1 }), startAnvil({ chainId: 2 })])
t.teardown(async () => {
  a.thaw()
  await Promise.all([a.stop(), b.stop()])
})

// Closed at the file's end, after the tests that made them (tap runs teardowns last in, first out).
const pool = (nodes: UpstreamNodeOptions[]): UpstreamPool => poolOn(t, nodes)
const node = (name: string, anvil: { url: string; wsUrl: string }, ws = false): UpstreamNodeOptions => ({
  name,
  kind: 'full',
  url: anvil.url,
  wsUrl: ws ? anvil.wsUrl : undefined,
  ws: { reconnectMinMs: 50, reconnectMaxMs: 200 },
})
const chainIdOf = (body: string) => JSON.parse(body).result as string

/** `waves` rounds of `n` concurrent eth_chainId calls; resolves with the answering chain ids. */
async function burst(p: UpstreamPool, n: number, waves: number, during?: () => Promise<void>): Promise<string[]> {
  const out: string[] = []
  for (let w = 0; w < waves; w++) {
    const calls = Array.from({ length: n }, (_, i) => p.call({ kind: 'full', method: 'eth_chainId', params: [], idJson: String(i), timeoutMs: 3_000 }))
    if (w === 0 && during) await during()
    for (const reply of await Promise.all(calls)) out.push(chainIdOf(reply.text))
  }
  return out
}

t.test('a killed node fails over to the other node with no failed call (HTTP)', async (t) => {
  const p = pool([node('a', a), node('b', b)])
  t.same(new Set(await burst(p, 10, 1)), new Set(['0x1', '0x2']), 'both nodes serve while up')
  // Calls go by score: the node that scores best surely gets the next ones (all of them when the
  // other is much slower, as on a loaded machine), so that is the node to kill.
  const nodes = p.nodes()
  const dying = nodes.reduce((x, y) => ((scoreOf(y) ?? Infinity) < (scoreOf(x) ?? Infinity) ? y : x))
  const [anvil, live] = dying === nodes[0] ? [a, '0x2'] : [b, '0x1']
  const answers = await burst(p, 20, 3, () => anvil.kill())
  t.equal(answers.length, 60, 'every call answered')
  t.ok(dying.counters.failures >= 1, 'the dead node failed calls, which were carried by the other')
  t.notOk(dying.healthy(), 'the dead node is out')
  t.ok(
    answers.slice(-20).every((id) => id === live),
    'then only the live node answers',
  )
  await anvil.restart()
})

t.test('with hedging on, a read on a hung best node is hedged at maxDelayMs while its p95 is not trusted yet', async (t) => {
  const p = pool([node('a', a), node('b', b)])
  // A few calls: both nodes measured, far below the 20 samples their p95 needs.
  await burst(p, 4, 1)
  const nodes = p.nodes()
  const best = nodes.reduce((x, y) => ((scoreOf(y) ?? Infinity) < (scoreOf(x) ?? Infinity) ? y : x))
  t.ok(best.latency.count < 20, `the best node has ${best.latency.count} samples`)
  const [anvil, live] = best === nodes[0] ? [a, '0x2'] : [b, '0x1']
  await anvil.freeze()
  try {
    const hedge = { minDelayMs: 50, maxDelayMs: 300 }
    const calls = Array.from({ length: 4 }, (_, i) =>
      p.call({ kind: 'full', method: 'eth_chainId', params: [], idJson: String(i), timeoutMs: 10_000, read: true, hedge }),
    )
    const answers = (await Promise.all(calls)).map((reply) => chainIdOf(reply.text))
    t.same(new Set(answers), new Set([live]), 'every read answered by the live node')
    // Without a hedge, the reads on the hung node would fail over only at their 10 s time-out.
    t.ok(p.hedges.won >= 1, `hedged: ${JSON.stringify(p.hedges)}`)
  } finally {
    anvil.thaw()
  }
})

t.test('a killed node fails over with no failed call (WebSocket, calls in flight)', async (t) => {
  const p = pool([node('a', a, true), node('b', b, true)])
  const [nodeA, nodeB] = p.nodes()
  t.ok(await nodeA.ws!.waitOpen(5_000))
  t.ok(await nodeB.ws!.waitOpen(5_000))
  // Frozen, node a holds its calls on the socket; the kill then fails them, and the pool must
  // carry them to node b.
  await a.freeze()
  const calls = Array.from({ length: 10 }, (_, i) => p.call({ kind: 'full', method: 'eth_chainId', params: [], idJson: String(i), timeoutMs: 5_000 }))
  t.ok(nodeA.ws!.pending >= 1, 'calls are pending on the frozen node')
  await a.kill()
  const answers = (await Promise.all(calls)).map((r) => chainIdOf(r.text))
  t.same(new Set(answers), new Set(['0x2']))
  t.ok(nodeB.counters.wsCalls >= 10, 'node b took them over its socket')
  await a.restart()
})

t.test('a node that never answers times out', async (t) => {
  await a.freeze()
  t.teardown(() => a.thaw())
  for (const ws of [false, true]) {
    const only = pool([node('frozen', a, ws)])
    const started = Date.now()
    await t.rejects(only.call({ kind: 'full', method: 'eth_chainId', params: [], idJson: '1', timeoutMs: 300 }), UpstreamTimeout, `ws: ${ws}`)
    t.ok(Date.now() - started >= 290, 'not before its time-out')
  }
  const p = pool([node('frozen', a), node('b', b)])
  const reply = await p.call({ kind: 'full', method: 'eth_chainId', params: [], idJson: '1', timeoutMs: 300 })
  t.equal(reply.node, 'b', 'the call went on to the other node')
  t.equal(chainIdOf(reply.text), '0x2')
  t.equal(p.nodes()[0].counters.failures, 1)
})

async function signedOn(anvil: typeof b): Promise<{ raw: string; hash: string }> {
  const [from, to] = (await anvil.rpc('eth_accounts')).result
  const nonce = (await anvil.rpc('eth_getTransactionCount', [from, 'pending'])).result
  const raw = (await anvil.rpc('eth_signTransaction', [{ from, to, value: '0x1', nonce, gas: '0x5208', gasPrice: '0x77359400' }])).result
  return { raw, hash: (await anvil.rpc('web3_sha3', [raw])).result }
}

t.test('eth_sendRawTransaction is not sent again after a time-out', async (t) => {
  await a.freeze()
  t.teardown(() => a.thaw())
  const p = pool([node('frozen', a), node('b', b)])
  const { raw, hash } = await signedOn(b)
  await t.rejects(p.call({ kind: 'full', method: 'eth_sendRawTransaction', params: [raw], idJson: '1', timeoutMs: 300 }), UpstreamTimeout)
  t.equal((await b.rpc('eth_getTransactionByHash', [hash])).result, null, 'node b never got it')
})

t.test('eth_sendRawTransaction fails over when the connection was refused', async (t) => {
  const nowhere = `http://127.0.0.1:${await freePort()}`
  const p = pool([{ name: 'refused', kind: 'full', url: nowhere }, node('b', b)])
  const { raw, hash } = await signedOn(b)
  const reply = await p.call({ kind: 'full', method: 'eth_sendRawTransaction', params: [raw], idJson: '1', timeoutMs: 2_000 })
  t.equal(reply.node, 'b')
  t.equal(JSON.parse(reply.text).result, hash)
  t.equal(p.nodes()[0].counters.failures, 1, 'the refused node was tried first')
})

t.test('no healthy node of the kind: NoHealthyUpstream', async (t) => {
  const p = pool([node('b', b)])
  t.equal(p.hasKind('archive'), false)
  await t.rejects(p.call({ kind: 'archive', method: 'eth_chainId', params: [], idJson: '1', timeoutMs: 1_000 }), NoHealthyUpstream)

  const nowhere = `http://127.0.0.1:${await freePort()}`
  const dead = poolOn(t, [{ name: 'refused', url: nowhere, health: { failureThreshold: 1, cooldownMs: 60_000 } }])
  const first = dead.call({ kind: 'full', method: 'eth_chainId', params: [], idJson: '1', timeoutMs: 1_000 })
  await t.rejects(first, UpstreamTransportError, 'the first call fails on the node')
  await first.catch((err) => t.equal(err.requestSent, false, 'refused: known not sent'))
  await t.rejects(dead.call({ kind: 'full', method: 'eth_chainId', params: [], idJson: '1', timeoutMs: 1_000 }), NoHealthyUpstream, 'then the node is out')
})
