import t from 'tap'
import { startAnvil } from '../../harness/anvil.js'
import { startFaultProxy } from '../helpers/fault-proxy.js'
import { rpc, startTestGateway } from '../helpers/gateway.js'
import { metric } from '../helpers/metrics.js'
import { waitFor } from '../helpers/eventually.js'

// One real anvil behind a proxy that behaves like a node's RPC server: 4 workers, the rest
// queued in arrival order, and a trace takes 250 ms. Tenant A floods distinct traces from 48
// connections; tenant B reads balances one at a time meanwhile. Before upstreams[].maxInFlight,
// the gateway sent everything at once: B's reads waited in the node's queue behind A's traces
// (the issue measured B's p99 at 2,794 ms, against 13 ms alone). With maxInFlight 4, the gateway
// holds at most 4 calls at the node, A at most 3 of them: B's reads always find a free worker.
// That is what this test checks, by the node's own queue (no clock): none of B's reads waited for
// a worker, and every call of the flood ended with an answer or a refusal that says why. The
// latency figures are the benchmark's (bench/README.md, noisy neighbour).

const anvil = await startAnvil()
t.teardown(() => anvil.stop())
const node = await startFaultProxy(anvil)
t.teardown(() => node.close())
node.workers = 4
node.set('debug_traceCall', { delayMs: 250 })

const tg = await startTestGateway(t, {
  networks: { 'eth-1': { chainId: 31337, upstreams: [{ url: node.url, name: 'node', kind: 'full', maxInFlight: 4 }] } },
  // The gateway's own calls (head polls, the finality poll) take the node's workers too and are
  // not counted in maxInFlight: only the polls at start, so that they do not take B's worker.
  quiet: true,
  config: { cache: { enabled: false } },
})
const a = await tg.createKey('tier-3')
const b = await tg.createKey('tier-3')
const url = tg.url('eth-1')
const [from] = (await anvil.rpc('eth_accounts')).result as string[]

t.test("one tenant's flood of traces does not queue another's reads at the node", async (t) => {
  const outcomes: Array<{ status: number; code?: number; message?: string; result?: unknown }> = []
  let flooding = true
  let n = 0
  const flooder = async (): Promise<void> => {
    while (flooding) {
      // Distinct calls (a different value each): none is shared in flight with another.
      const value = `0x${(++n).toString(16)}`
      const res = await rpc(url, { jsonrpc: '2.0', id: n, method: 'debug_traceCall', params: [{ from, to: from, value }, 'latest'] }, { apiKey: a.apiKey })
      outcomes.push({ status: res.status, code: res.json?.error?.code, message: res.json?.error?.message, result: res.json?.result })
    }
  }
  const flood = Array.from({ length: 48 }, flooder)
  // B starts once the node is busy with A's traces (30 s is an outer bound, so that the test
  // cannot hang if they never come).
  await waitFor(() => node.received('debug_traceCall') >= 8, "A's traces at the node", 30_000)
  const reads: number[] = []
  for (let i = 0; i < 60; i++) {
    const t0 = performance.now()
    const res = await rpc(url, { jsonrpc: '2.0', id: i, method: 'eth_getBalance', params: [from, 'latest'] }, { apiKey: b.apiKey })
    reads.push(performance.now() - t0)
    t.equal(res.status, 200)
    t.match(res.json.result, /^0x[0-9a-f]+$/)
  }
  flooding = false
  await Promise.all(flood)
  reads.sort((x, y) => x - y)

  t.equal(
    node.waited('eth_getBalance'),
    0,
    `none of B's 60 reads waited for a worker at the node (B's slowest read: ${Math.round(reads[reads.length - 1])} ms)`,
  )
  t.ok(node.received('debug_traceCall') >= 8, `A's traces reached the node (${node.received('debug_traceCall')})`)
  const served = outcomes.filter((o) => o.status === 200 && o.result !== undefined).length
  const refused = outcomes.filter((o) => (o.status === 503 && o.code === -32025) || (o.status === 429 && o.code === -32005))
  t.ok(served > 0, `some of A's traces were served (${served})`)
  t.equal(served + refused.length, outcomes.length, `each of A's ${outcomes.length} traces was served or refused with its reason, none failed otherwise`)
  for (const o of refused.filter((r) => r.code === -32025).slice(0, 1)) t.match(o.message, /at capacity: it waited \d+ ms for a free slot/)
  t.equal(await metric(tg.gateway.admin, 'tollgate_upstream_capacity_slots', { node: 'node' }), 4)
  t.ok(
    ((await metric(tg.gateway.admin, 'tollgate_upstream_capacity_waits_total', { node: 'node', plan: 'tier-3' })) ?? 0) > 0,
    "A's traces waited their turn in the gateway, counted by A's plan",
  )
  t.equal(await metric(tg.gateway.admin, 'tollgate_upstream_waiting', { node: 'node' }), 0, 'nothing is left waiting')
})
