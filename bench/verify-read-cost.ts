// What `verify: "reads"` costs a read, in node calls and in the gateway's CPU, beside the same read
// unverified, in one run: one real anvil as three nodes of two networks (eth-1 verifies, eth-2 does
// not), rounds alternating between them. Then eth_getLogs over 1,000 blocks with a sparse filter
// (a log every 100 blocks), verified and not: node calls and latency.
// Run: node --import tsx bench/verify-read-cost.ts [rounds=6] [readsPerRound=300]
// The CPU is the whole process's (gateway and the benchmark's client alike) over a round, per read:
// the client's share is the same in both networks, so the ratio understates the gateway's.
import { startAnvil } from '../harness/anvil.js'
import { deployLogEmitter, emitLogs } from '../harness/log-emitter.js'
import { rpc, startTestGateway } from '../test/helpers/gateway.js'
import { metricsPage, readMetric } from '../test/helpers/metrics.js'

const ROUNDS = Number(process.argv[2] ?? 6)
const READS = Number(process.argv[3] ?? 300)
const cleanups: (() => unknown)[] = []
const t = { teardown: (fn: () => unknown) => void cleanups.push(fn) }

const anvil = await startAnvil()
try {
  const emitter = await deployLogEmitter(anvil)
  // 1,000 blocks, a log every 100th: a sparse filter's candidates are 10 blocks of 1,000.
  for (let i = 0; i < 10; i++) {
    await anvil.rpc('anvil_mine', ['0x63'])
    await emitLogs(anvil, emitter, { blocks: 1, perBlock: 1, gap: 0 })
  }
  const head = Number((await anvil.rpc('eth_blockNumber')).result)
  const upstreams = ['a', 'b', 'c'].map((name) => ({ url: anvil.url, name, kind: 'full' as const }))
  const tg = await startTestGateway(t, {
    networks: { 'eth-1': { chainId: 31337, verify: 'reads', upstreams }, 'eth-2': { chainId: 31337, upstreams } },
    config: { cache: { enabled: false }, hedge: { enabled: false } },
  })
  const { apiKey } = await tg.createKey('tier-3')
  const [who] = (await anvil.rpc('eth_accounts')).result as string[]
  const nodeCalls = async (network: string): Promise<number> => {
    const page = await metricsPage(tg.gateway.admin)
    return upstreams.reduce((n, u) => n + (readMetric(page, 'tollgate_upstream_calls_total', { network, node: u.name }) ?? 0), 0)
  }
  const balance = { jsonrpc: '2.0', id: 1, method: 'eth_getBalance', params: [who, 'latest'] }

  const round = async (network: string) => {
    const calls = await nodeCalls(network)
    const cpu = process.cpuUsage()
    for (let i = 0; i < READS; i++) await rpc(tg.url(network), balance, { apiKey })
    const used = process.cpuUsage(cpu)
    return { cpuMicrosPerRead: (used.user + used.system) / READS, nodeCallsPerRead: ((await nodeCalls(network)) - calls) / READS }
  }
  await round('eth-1')
  await round('eth-2') // warm both
  const results: Record<string, { cpu: number[]; calls: number[] }> = { 'eth-1': { cpu: [], calls: [] }, 'eth-2': { cpu: [], calls: [] } }
  for (let r = 0; r < ROUNDS; r++) {
    for (const network of r % 2 === 0 ? ['eth-1', 'eth-2'] : ['eth-2', 'eth-1']) {
      const { cpuMicrosPerRead, nodeCallsPerRead } = await round(network)
      results[network]!.cpu.push(cpuMicrosPerRead)
      results[network]!.calls.push(nodeCallsPerRead)
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  const v = results['eth-1']!
  const u = results['eth-2']!
  console.log(
    JSON.stringify({
      scenario: 'eth_getBalance at latest',
      rounds: ROUNDS,
      readsPerRound: READS,
      verified: { cpuMicrosPerRead: Math.round(median(v.cpu)), nodeCallsPerRead: median(v.calls) },
      unverified: { cpuMicrosPerRead: Math.round(median(u.cpu)), nodeCallsPerRead: median(u.calls) },
      cpuRatio: Math.round((median(v.cpu) / median(u.cpu)) * 1000) / 1000,
    }),
  )

  // The node calls include the head monitor's polls of the round's seconds (both networks alike).
  const logs = {
    jsonrpc: '2.0',
    id: 2,
    method: 'eth_getLogs',
    params: [{ fromBlock: `0x${(head - 999).toString(16)}`, toBlock: `0x${head.toString(16)}`, address: emitter.address }],
  }
  for (const [label, network] of [
    ['unverified', 'eth-2'],
    ['verified, first (headers fetched)', 'eth-1'],
    ['verified, again (headers kept)', 'eth-1'],
  ] as const) {
    const calls = await nodeCalls(network)
    const started = performance.now()
    const r = await rpc(tg.url(network), logs, { apiKey })
    const ms = performance.now() - started
    console.log(
      JSON.stringify({
        scenario: 'eth_getLogs over 1,000 blocks, 10 with a log',
        label,
        logs: r.json.result?.length,
        error: r.json.error?.message,
        nodeCalls: (await nodeCalls(network)) - calls,
        ms: Math.round(ms),
      }),
    )
  }
} finally {
  for (const fn of cleanups.reverse()) await fn()
  await anvil.stop()
}
