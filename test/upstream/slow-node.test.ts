import t from 'tap'
import { startAnvil } from '../../harness/anvil.js'
import { startFaultProxy } from '../helpers/fault-proxy.js'
import { oneNetwork, rpc, startTestGateway } from '../helpers/gateway.js'
import { metric } from '../helpers/metrics.js'

// A node that answers in 300 ms beside one that answers at once (both the same real anvil, the
// slow one behind a proxy that delays every call). Before, each got every other call: 200 reads
// in a row had p50 303 ms and p99 308 ms. Now the slow node gets only the probes that measure
// it, each hedged to the fast node after the fast node's p95, so no client waits for it.
// Latencies are reported here, and judged in the benchmark (bench/README.md, "a slow node").

const READS = 200
/** One read in 20 probes another node (src/upstream/node-choice.ts, PROBE_EVERY). */
const PROBE_EVERY = 20
const anvil = await startAnvil()
t.teardown(() => anvil.stop())
const slow = await startFaultProxy(anvil)
t.teardown(() => slow.close())
slow.set('*', { delayMs: 300 })

const tg = await startTestGateway(t, {
  networks: oneNetwork([
    { url: anvil.url, name: 'fast' },
    { url: slow.url, name: 'slow' },
  ]),
})
const { apiKey } = await tg.createKey('tier-3')
const [account] = (await anvil.rpc('eth_accounts')).result

t.test('a slow node beside a fast one: only probes reach it, and the fast node answers them', async (t) => {
  const before = slow.received('eth_getBalance')
  const balance = (await anvil.rpc('eth_getBalance', [account, 'latest'])).result
  const ms: number[] = []
  const wrong: unknown[] = []
  for (let i = 0; i < READS; i++) {
    const started = performance.now()
    const r = await rpc(tg.url('eth-1'), { jsonrpc: '2.0', id: i, method: 'eth_getBalance', params: [account, 'latest'] }, { apiKey })
    ms.push(performance.now() - started)
    if (r.json.result !== balance) wrong.push(r.json)
  }
  t.same(wrong, [], `all ${READS} reads answered with the balance`)
  const reached = slow.received('eth_getBalance') - before
  // The first reads measure both nodes; then one read in PROBE_EVERY goes to the slow one.
  t.ok(reached <= READS / PROBE_EVERY + 2, `${reached} of ${READS} reads reached the slow node (at most ${READS / PROBE_EVERY + 2})`)
  const won = (await metric(tg.gateway.admin, 'tollgate_hedge_wins_total', { network: 'eth-1' })) ?? 0
  t.ok(won >= reached - 2, `the fast node answered the probes: ${won} hedges won of ${reached} probes`)
  ms.sort((a, b) => a - b)
  t.comment(`p50 ${ms[READS / 2 - 1]!.toFixed(1)} ms, p99 ${ms[Math.ceil(READS * 0.99) - 1]!.toFixed(1)} ms`)
})
