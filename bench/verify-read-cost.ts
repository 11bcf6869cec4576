// What `verify: "reads"` costs a read, in node calls and in the gateway's own CPU, beside the same
// read unverified, in one run: one real anvil as three nodes of two networks (eth-1 verifies, eth-2
// does not), behind ONE gateway in a process of its own (`tollgate start`), rounds alternating
// between the networks (paired: both loaded alike by whatever else runs on the machine). The CPU
// is the gateway process's (utime + stime from /proc, in clock ticks of 10 ms: rounds of 3,000
// reads make that 1 to 3%), so the client's share is not in it. Then eth_getLogs over 1,000
// blocks with a sparse filter (a log every 100 blocks), verified and not: node calls and latency.
// Run: node --import tsx bench/verify-read-cost.ts [rounds=6] [readsPerRound=3000]
import { readFileSync } from 'node:fs'
import { startAnvil } from '../harness/anvil.js'
import { deployLogEmitter, emitLogs } from '../harness/log-emitter.js'
import { catalogWith } from '../test/helpers/plan-catalog.js'
import { createAccountKey } from '../test/helpers/fleet.js'
import { startGatewayProcess } from '../test/helpers/gateway-process.js'
import { rpc } from '../test/helpers/gateway.js'
import { metricsPage, readMetric } from '../test/helpers/metrics.js'

const ROUNDS = Number(process.argv[2] ?? 6)
const READS = Number(process.argv[3] ?? 3000)
const cleanups: (() => unknown)[] = []
const t = { teardown: (fn: () => unknown) => void cleanups.push(fn) }
/** Clock ticks a second of /proc/<pid>/stat's times (Linux's USER_HZ). */
const TICKS_PER_S = 100

/** The CPU time a process has used so far, in µs (user + system). */
function cpuMicrosOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  // The fields after the command name (which may hold spaces), from the 3rd on: utime is the 14th, stime the 15th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / TICKS_PER_S
}

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
  // A plan without a rate that matters here: reads are never held for their token.
  const catalog = catalogWith(t, (tier3) => [{ ...tier3, id: 'wide', name: 'Wide', limits: { fullRps: 1e7, archiveRps: 1e7 } }])
  const gw = await startGatewayProcess(t, {
    config: {
      networks: { 'eth-1': { chainId: 31337, verify: 'reads', upstreams }, 'eth-2': { chainId: 31337, upstreams } },
      cache: { enabled: false },
      hedge: { enabled: false },
      plans: { catalog },
    },
  })
  const { apiKey } = await createAccountKey(gw, 'wide', 'eth-1:full,eth-2:full')
  const [who] = (await anvil.rpc('eth_accounts')).result as string[]
  const nodeCalls = async (network: string): Promise<number> => {
    const page = await metricsPage(gw.admin)
    return upstreams.reduce((n, u) => n + (readMetric(page, 'tollgate_upstream_calls_total', { network, node: u.name }) ?? 0), 0)
  }
  // Each read names an account no read named before (a proof checked once is kept for its block:
  // the same account again would measure that, not the check); `hot` reads one account over and over.
  let next = 0x5eed_0000
  const balance = (hot: boolean) => ({
    jsonrpc: '2.0',
    id: 1,
    method: 'eth_getBalance',
    params: [hot ? who : `0x${(next++).toString(16).padStart(40, '0')}`, 'latest'],
  })

  let failed = 0
  const round = async (network: string, hot = false) => {
    const calls = await nodeCalls(network)
    const cpu = cpuMicrosOf(gw.pid)
    for (let i = 0; i < READS; i++) if ((await rpc(gw.url(network), balance(hot), { apiKey })).json.result === undefined) failed++
    const used = cpuMicrosOf(gw.pid) - cpu
    return { cpuMicrosPerRead: used / READS, nodeCallsPerRead: ((await nodeCalls(network)) - calls) / READS }
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
      scenario: 'eth_getBalance at latest, a new account each read',
      rounds: ROUNDS,
      readsPerRound: READS,
      verified: { cpuMicrosPerRead: Math.round(median(v.cpu)), nodeCallsPerRead: median(v.calls) },
      unverified: { cpuMicrosPerRead: Math.round(median(u.cpu)), nodeCallsPerRead: median(u.calls) },
      gatewayCpuRatio: Math.round((median(v.cpu) / median(u.cpu)) * 1000) / 1000,
      perRoundRatios: v.cpu.map((c, i) => Math.round((c / u.cpu[i]!) * 1000) / 1000),
      failedReads: failed,
    }),
  )

  // One hot account read over and over: the proofs of each block are checked once and kept.
  const hot = { verified: [] as number[], unverified: [] as number[], calls: [] as number[] }
  for (let r = 0; r < 2; r++) {
    const v = await round('eth-1', true)
    const u = await round('eth-2', true)
    hot.verified.push(v.cpuMicrosPerRead)
    hot.unverified.push(u.cpuMicrosPerRead)
    hot.calls.push(v.nodeCallsPerRead)
  }
  console.log(
    JSON.stringify({
      scenario: 'eth_getBalance of one account at latest (proofs kept per block)',
      verified: { cpuMicrosPerRead: Math.round(median(hot.verified)), nodeCallsPerRead: median(hot.calls) },
      unverified: { cpuMicrosPerRead: Math.round(median(hot.unverified)) },
      gatewayCpuRatio: Math.round((median(hot.verified) / median(hot.unverified)) * 1000) / 1000,
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
    const r = await rpc(gw.url(network), logs, { apiKey })
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
