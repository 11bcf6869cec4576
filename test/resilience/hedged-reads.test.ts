import t from 'tap'
import { startAnvil } from '../helpers/anvil.js'
import { startTestGateway } from '../helpers/gateway.js'

// With hedging on, a read stuck on a hung node is also asked of another node, and the client gets
// that answer long before the hung node's time-out (60 s here: without hedging the client's own
// 15 s abort below would fail the test).
const [a, b] = await Promise.all([startAnvil(), startAnvil()])
t.teardown(async () => {
  a.thaw()
  await Promise.all([a.stop(), b.stop()])
})
const tg = await startTestGateway(t, {
  networks: {
    'eth-1': {
      chainId: 31337,
      upstreams: [
        { url: a.url, kind: 'full', name: 'a' },
        { url: b.url, kind: 'full', name: 'b' },
      ],
    },
  },
  limits: { upstreamTimeoutMs: 60_000 },
  config: { hedge: { enabled: true, minDelayMs: 50, maxDelayMs: 500 }, health: { pollMs: 600_000 }, cache: { finalityPollMs: 600_000 } },
})
const { apiKey } = await tg.createKey('tier-3')
const pool = tg.gateway.upstreams.pool('eth-1')!
// Distinct calls (a balance per id), so that in-flight sharing does not fold them into one, and
// round-robin sends some of them to the hung node.
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
  await a.freeze()
  const answers = await Promise.all(Array.from({ length: 4 }, (_, i) => read(100 + i, AbortSignal.timeout(15_000))))
  t.ok(
    answers.every((x) => typeof x.result === 'string'),
    'every read answered',
  )
  t.ok(pool.hedges.won >= 1, `the second node answered first ${pool.hedges.won} times`)
  a.thaw()
})
