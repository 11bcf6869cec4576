import t from 'tap'
import type { Anvil } from '../../harness/anvil.js'
import { scoreOf } from '../../src/upstream/node-choice.js'
import { anvilGateway } from '../helpers/anvil-gateway.js'

// With hedging on, a read stuck on a hung node is also asked of another node, and the client gets
// that answer long before the hung node's time-out (60 s here: without hedging the client's own
// 15 s abort below would fail the test).
// A node left frozen by a failed test is let go at teardown: stop() sends SIGCONT after SIGTERM.
const {
  anvils,
  tg,
  key: { apiKey },
} = await anvilGateway(t, {
  anvils: 2,
  names: ['a', 'b'],
  nodeWs: false,
  limits: { upstreamTimeoutMs: 60_000 },
  quiet: true,
  config: { hedge: { enabled: true, minDelayMs: 50, maxDelayMs: 500 } },
})
const pool = tg.gateway.upstreams.pool('eth-1')!
// Distinct calls (a balance per id), so that in-flight sharing does not fold them into one.
const read = (id: number, signal?: AbortSignal) =>
  fetch(`${tg.url('eth-1')}?apikey=${apiKey}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'eth_getBalance', params: [`0x${id.toString(16).padStart(40, '0')}`, 'latest'] }),
    signal,
  }).then((r) => r.json() as Promise<{ result?: string; error?: unknown }>)

t.test('a read on a hung node is answered by the hedge', async (t) => {
  // Enough answers from both nodes for their p95 to be trusted.
  for (let i = 0; i < 50; i++) t.ok((await read(i)).result, `warm-up ${i}`)
  // The node that scores best gets the next reads (all of them when the other is much slower, as
  // on a loaded machine; every other one when both are close): that is the node to hang.
  const nodes = pool.nodes()
  const best = nodes.reduce((x, y) => ((scoreOf(y) ?? Infinity) < (scoreOf(x) ?? Infinity) ? y : x))
  const a = anvils[nodes.indexOf(best)] as Anvil
  t.equal(best.name, ['a', 'b'][nodes.indexOf(best)], 'the pool lists its nodes in the order of the config')
  const before = nodes.map((n) => `${n.name}: ${n.latency.count} samples, p50 ${n.latency.p50()} ms, p95 ${n.latency.p95()} ms`).join('; ')
  await a.freeze()
  const answers = await Promise.allSettled(Array.from({ length: 4 }, (_, i) => read(100 + i, AbortSignal.timeout(15_000))))
  const said = answers.map((x) => (x.status === 'fulfilled' ? (typeof x.value.result === 'string' ? 'answered' : JSON.stringify(x.value)) : String(x.reason)))
  t.ok(
    said.every((x) => x === 'answered'),
    `every read answered: ${said.join(', ')} (hedges ${JSON.stringify(pool.hedges)}; ${best.name} hung; before it: ${before})`,
  )
  t.ok(pool.hedges.won >= 1, `the second node answered first ${pool.hedges.won} times`)
  a.thaw()
})
