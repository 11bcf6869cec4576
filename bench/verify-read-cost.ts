// What `verify: "reads"` costs a read, in node calls and in the gateway's own CPU, beside the same
// read unverified, in one run: three nodes of two networks (eth-1 verifies, eth-2 does not) behind
// ONE gateway in a process of its own (`tollgate start`), rounds alternating between the networks
// (paired: both loaded alike by whatever else runs on the machine). The CPU is the gateway
// process's (utime + stime from /proc, in clock ticks of 10 ms), less what the idle gateway uses
// in as long (its polls and timers), so the client's share and waiting are not in it.
//
// The nodes are one real anvil behind a recording node (bench/stub/recording-node.ts): each call is
// asked of anvil once, in a warm-up, and answered as anvil answered it from then on. anvil builds
// an eth_getProof in about 2 ms of CPU, on the same two cores: the gateway, preempted and with its
// caches cold, then spends more CPU on everything it does (measured straight against anvil: 566
// against 307 us a read with one read at a time, 579 against 190 with eight), which is the node's
// cost showing up in the gateway's. Reads name a new account each (the proofs the gateway keeps,
// 4,096 a block, are read round after round: more accounts than that, in turn, are never kept).
// Then eth_getLogs over 1,000 blocks with a sparse filter (a log every 100 blocks), verified and
// not: node calls and latency.
// Run: node --import tsx bench/verify-read-cost.ts [rounds=6] [readsPerRound=3000]
import { readFileSync } from 'node:fs'
import { startAnvil } from '../harness/anvil.js'
import { startRecordingNode } from './stub/recording-node.js'
import { deployLogEmitter, emitLogs } from '../harness/log-emitter.js'
import { catalogWith } from '../test/helpers/plan-catalog.js'
import { createAccountKey } from '../test/helpers/fleet.js'
import { startGatewayProcess } from '../test/helpers/gateway-process.js'
import { rpc } from '../test/helpers/gateway.js'
import { metricsPage, readMetric } from '../test/helpers/metrics.js'

const ROUNDS = Number(process.argv[2] ?? 6)
const READS = Number(process.argv[3] ?? 3000)
/** Accounts read in turn: more than the gateway keeps proofs of (4,096), so no read is answered from one kept. */
const ACCOUNTS = 6_000
/** A window with no reads, after each pair of rounds, for the idle gateway's CPU (ms). */
const IDLE_WINDOW_MS = 3_000
const cleanups: (() => unknown)[] = []
const t = { teardown: (fn: () => unknown) => void cleanups.push(fn) }
/**
 * Stops what the run started (the gateway by its PID, the recording node, anvil), the last started
 * first, each whatever the others did: one that failed left the gateway's `tollgate start` running
 * after the run. Run at the end, on an error, and on SIGINT or SIGTERM (then the run exits); an
 * exit from anywhere else still kills the gateway (test/helpers/gateway-process.ts) and anvil.
 */
async function stopAll(): Promise<void> {
  for (const fn of cleanups.splice(0).reverse()) {
    try {
      await fn()
    } catch (err) {
      console.error(`stopping what the run started: ${String(err)}`)
    }
  }
}
for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
] as const) {
  process.once(signal, () => void stopAll().finally(() => process.exit(code)))
}
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
cleanups.push(() => anvil.stop())
try {
  const emitter = await deployLogEmitter(anvil)
  // 1,000 blocks, a log every 100th: a sparse filter's candidates are 10 blocks of 1,000.
  for (let i = 0; i < 10; i++) {
    await anvil.rpc('anvil_mine', ['0x63'])
    await emitLogs(anvil, emitter, { blocks: 1, perBlock: 1, gap: 0 })
  }
  const head = Number((await anvil.rpc('eth_blockNumber')).result)
  const node = await startRecordingNode(anvil.url)
  cleanups.push(() => node.close())
  const upstreams = ['a', 'b', 'c'].map((name) => ({ url: node.url, name, kind: 'full' as const }))
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
  let next = 0
  const balance = (hot: boolean) => ({
    jsonrpc: '2.0',
    id: 1,
    method: 'eth_getBalance',
    params: [hot ? who : `0x${(0x5eed_0000 + (next++ % ACCOUNTS)).toString(16).padStart(40, '0')}`, 'latest'],
  })

  let failed = 0
  /** CPU (µs) and wall time (ms) of `count` reads, `inFlight` at once, and the node calls they made. */
  const round = async (network: string, hot = false, inFlight = 1, count = READS) => {
    const calls = await nodeCalls(network)
    const cpu = cpuMicrosOf(gw.pid)
    const started = performance.now()
    let left = count
    const client = async () => {
      while (left-- > 0) if ((await rpc(gw.url(network), balance(hot), { apiKey })).json.result === undefined) failed++
    }
    await Promise.all(Array.from({ length: inFlight }, client))
    const wallMs = performance.now() - started
    const cpuMicros = cpuMicrosOf(gw.pid) - cpu
    return { cpuMicros, wallMs, nodeCallsPerRead: ((await nodeCalls(network)) - calls) / count }
  }
  // The gateway's CPU while no read comes (its head polls of six nodes, timers, V8's threads):
  // 1.5 to 3% of a core here. Rounds of one network may last longer than the other's without
  // causing more of it, so each round is given less this idle rate times its length.
  const idle = { cpuMicros: 0, wallMs: 0 }
  const idleWindow = async () => {
    const cpu = cpuMicrosOf(gw.pid)
    const started = performance.now()
    await new Promise((resolve) => setTimeout(resolve, IDLE_WINDOW_MS))
    idle.cpuMicros += cpuMicrosOf(gw.pid) - cpu
    idle.wallMs += performance.now() - started
  }
  const idleRate = () => idle.cpuMicros / idle.wallMs // µs of CPU per ms
  type Round = Awaited<ReturnType<typeof round>>
  const perRead = (r: Round) => ({ raw: r.cpuMicros / READS, caused: (r.cpuMicros - idleRate() * r.wallMs) / READS })
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  const ratio = (a: number, b: number) => Math.round((a / b) * 1000) / 1000

  // Every account read once on each network: the recording node asks anvil for each proof and balance now.
  await round('eth-1', false, 8, ACCOUNTS)
  await round('eth-2', false, 8, ACCOUNTS)
  for (const inFlight of [1, 8]) {
    const rounds: Record<string, Round[]> = { 'eth-1': [], 'eth-2': [] }
    for (let r = 0; r < ROUNDS; r++) {
      for (const network of r % 2 === 0 ? ['eth-1', 'eth-2'] : ['eth-2', 'eth-1']) rounds[network]!.push(await round(network, false, inFlight))
      await idleWindow()
    }
    const of = (network: string) => {
      const rs = rounds[network]!
      return {
        cpuMicrosPerRead: Math.round(median(rs.map((r) => perRead(r).caused))),
        cpuMicrosPerReadWithIdle: Math.round(median(rs.map((r) => perRead(r).raw))),
        wallMicrosPerRead: Math.round((median(rs.map((r) => r.wallMs)) * 1000) / READS),
        nodeCallsPerRead: median(rs.map((r) => r.nodeCallsPerRead)),
      }
    }
    const verified = of('eth-1')
    const unverified = of('eth-2')
    console.log(
      JSON.stringify({
        scenario: 'eth_getBalance at latest, a new account each read',
        rounds: ROUNDS,
        readsPerRound: READS,
        inFlight,
        idleGatewayCpuPercent: Math.round(idleRate() * 1000) / 10_000,
        verified,
        unverified,
        gatewayCpuRatio: ratio(verified.cpuMicrosPerRead, unverified.cpuMicrosPerRead),
        gatewayCpuRatioWithIdle: ratio(verified.cpuMicrosPerReadWithIdle, unverified.cpuMicrosPerReadWithIdle),
        perRoundRatios: rounds['eth-1']!.map((r, i) => ratio(perRead(r).caused, perRead(rounds['eth-2']![i]!).caused)),
        failedReads: failed,
      }),
    )
  }

  // One hot account read over and over: the proofs of each block are checked once and kept.
  const hot = { verified: [] as number[], unverified: [] as number[], calls: [] as number[] }
  for (let r = 0; r < 2; r++) {
    const v = await round('eth-1', true)
    const u = await round('eth-2', true)
    hot.verified.push(perRead(v).caused)
    hot.unverified.push(perRead(u).caused)
    hot.calls.push(v.nodeCallsPerRead)
  }
  console.log(
    JSON.stringify({
      scenario: 'eth_getBalance of one account at latest (proofs kept per block)',
      verified: { cpuMicrosPerRead: Math.round(median(hot.verified)), nodeCallsPerRead: median(hot.calls) },
      unverified: { cpuMicrosPerRead: Math.round(median(hot.unverified)) },
      gatewayCpuRatio: ratio(median(hot.verified), median(hot.unverified)),
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
  await stopAll()
}
