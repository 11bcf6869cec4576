/**
 * `npm run bench:fleet-sim`: what sharing limits costs an instance of a fleet of 10 to 300
 * instances on one local nats-server, with 1,000 to 100,000 active accounts, and how many usage
 * events one JetStream stream takes. The figures and the capacity model drawn from them are in
 * docs/fleet.md.
 *
 * Per configuration (instances N × accounts A × workload): the N-1 peers (virtual instances, the
 * gateway's own Fleet and FleetBus, split over `--peer-procs` processes) and one observer (an
 * instance with a real AccountActor per account, in a process of its own): see
 * bench/scenarios/fleet-sim-instances.ts. The observer's CPU, less what admitting its own calls
 * took, is what limit sharing costs an instance.
 *
 * Time scaled (`--time-scale k`, or `auto`): syncMs, coldReportMs, heartbeats and silence k times
 * longer and every account k times slower, so that each interval holds the same entries and
 * messages and a second holds 1/k of them. Two cores cannot host 300 instances' peers at their
 * real rate; scaled, the peers keep to it, and what the observer spends per message and per entry
 * is measured at a rate it keeps up with. The figures at real time are the measured ones × k
 * (rates and the sharing's CPU), reported beside them.
 *
 * Cold reports go every C_eff = max(coldReportMs, (N − 1)/M s), M = `--max-reports`
 * (fleet.maxReportsPerSecond, 100; scaled with time as the intervals are: M/k a second), and
 * heartbeats every max(1 s, N/H s), H = `--max-heartbeats` (fleet.maxHeartbeatsPerSecond, 100;
 * H/k a second), the silence stretched as much.
 *
 * Options: --quick (shorter windows, 10 and 30 instances), --instances 10,30,100,300,
 * --accounts 1000,10000,100000, --workloads spread,all, --sync-ms 50, --cold-report-ms 250,
 * --max-reports 100, --max-heartbeats 100,
 * --rate 9 (calls a second per account, spread workload), --peer-procs 2, --time-scale auto|k,
 * --duration S (real seconds measured), --warmup S, --no-usage (no usage-stream rows),
 * --results NAME (bench/results/NAME.json and .md; default fleet-sim).
 */
import { writeFileSync, mkdirSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { startNats } from '../harness/nats-server.js'
import { runNodeJson, startNodeScript, type Started } from './lib/processes.js'
import { machine } from './lib/machine.js'
import type { FleetSimInstancesOptions } from './scenarios/fleet-sim-instances.js'
import { MAX_ENTRIES_PER_MESSAGE } from '../src/fleet/fleet.js'
import { coldIntervalMs, MAX_REPORTS_PER_SECOND } from '../actors/fleet/cold-interval.js'
import { MAX_HEARTBEATS_PER_SECOND } from '../actors/fleet/heartbeat-interval.js'

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    instances: { type: 'string' },
    accounts: { type: 'string', default: '1000,10000,100000' },
    workloads: { type: 'string', default: 'spread,all' },
    'sync-ms': { type: 'string', default: '50' },
    'cold-report-ms': { type: 'string', default: '250' },
    'max-reports': { type: 'string', default: String(MAX_REPORTS_PER_SECOND) },
    'max-heartbeats': { type: 'string', default: String(MAX_HEARTBEATS_PER_SECOND) },
    rate: { type: 'string', default: '9' },
    'peer-procs': { type: 'string', default: '2' },
    'time-scale': { type: 'string', default: 'auto' },
    'no-usage': { type: 'boolean', default: false },
    duration: { type: 'string' },
    warmup: { type: 'string' },
    results: { type: 'string', default: 'fleet-sim' },
  },
})
const list = (s: string): number[] => s.split(',').map(Number)
const quick = values.quick
const instances = list(values.instances ?? (quick ? '10,30' : '10,30,100,300'))
const accounts = list(values.accounts)
const coldReportMs = Number(values['cold-report-ms'])
const maxReportsPerSecond = Number(values['max-reports'])
const maxHeartbeatsPerSecond = Number(values['max-heartbeats'])
const peerProcs = Number(values['peer-procs'])
const workloads = values.workloads.split(',') as FleetSimInstancesOptions['workload'][]
const syncMs = Number(values['sync-ms'])
const rate = Number(values.rate)
const durationS = Number(values.duration ?? (quick ? 3 : 8))
const warmupS = Number(values.warmup ?? (quick ? 2 : 3))
const producers = values['no-usage'] ? [] : quick ? [1, 2] : [1, 2, 4]

/** C_eff at real time for a fleet of n, in whole syncs, as the instances apply it (src/fleet/cold-reports.ts). */
function coldMsAt(n: number): number {
  return Math.max(1, Math.round(coldIntervalMs({ coldReportMs, instances: n, maxReportsPerSecond }) / syncMs)) * syncMs
}

/**
 * The time scale for a row: enough that the peers' processes (about 1 µs an entry they take and
 * hold, 40 µs a message they pack, publish or hear (under this load), heartbeats included) and the observer (about
 * 3 µs an entry in) each need under BUDGET of a core at the scaled rate. Rough on purpose: the rows say the k they ran at and
 * whether the peers kept to their target.
 */
/** The CPU a process may take at the scaled rate: the 2 cores are shared with other engineers' work (load 15-20). */
const BUDGET = 0.1

function timeScaleFor(n: number, a: number, workload: FleetSimInstancesOptions['workload']): number {
  if (values['time-scale'] !== 'auto') return Number(values['time-scale'])
  const owned = (2 * a) / n
  const coldMs = coldMsAt(n)
  const pSync = workload === 'all' ? 1 : 1 - Math.exp(-(rate * syncMs) / 1000 / n)
  const pCold = workload === 'all' ? 1 : 1 - Math.exp(-(rate * coldMs) / 1000 / n)
  const peerEntries = (n - 1) * owned * pSync * (1000 / syncMs)
  const peerMsgs = ((n - 1) * (1 + Math.min(n - 2, owned * pCold))) / (coldMs / 1000)
  const observerEntries = ((n - 1) * owned * pCold) / (coldMs / 1000)
  // Every virtual instance hears every heartbeat: N·min(N, H) a second over the peers' processes.
  const heartbeats = n * Math.min(n, maxHeartbeatsPerSecond)
  const cpu = Math.max((peerEntries * 1 + (peerMsgs + heartbeats) * 40) / peerProcs, observerEntries * 3) / 1e6
  return Math.max(1, Math.ceil(cpu / BUDGET))
}

const INSTANCES = join(import.meta.dirname, 'scenarios', 'fleet-sim-instances.ts')
const APPEND = join(import.meta.dirname, 'scenarios', 'event-log-append.ts')
const RESULTS = join(import.meta.dirname, 'results')
const log = (line: string): void => void process.stderr.write(`[fleet-sim] ${line}\n`)
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

type Figures = Record<string, number>
interface SharingRow {
  instances: number
  accounts: number
  workload: string
  /** The time scale it ran at (k: intervals k times longer, accounts k times slower). */
  timeScale: number
  /** C_eff at real time: how often cold reports went (coldReportMs, or (N − 1)/M past M). */
  coldMs: number
  /** What the peers were to send the observer's subject a second (scaled): one report each per C, in messages of at most MAX_ENTRIES_PER_MESSAGE. */
  peersTargetMsgsPerS: number
  peers: Figures
  observer: Figures
  /** The 1-minute load average of the machine when the row was measured (2 cores: above 2, every process waits for a core). */
  loadavg: number
}

async function sharing(nats: string, n: number, a: number, workload: FleetSimInstancesOptions['workload'], run: number): Promise<SharingRow> {
  const k = timeScaleFor(n, a, workload)
  const coldMs = coldMsAt(n)
  // M is a rate: k times slower time holds 1/k of it, so C_eff scales by k as C does.
  const scaled = {
    syncMs: syncMs * k,
    coldReportMs: coldReportMs * k,
    maxReportsPerSecond: maxReportsPerSecond / k,
    heartbeatMs: 1_000 * k,
    silentMs: 3_000 * k,
    maxHeartbeatsPerSecond: maxHeartbeatsPerSecond / k,
  }
  const scaledColdMs = coldMs * k
  const base = { nats, subjectRoot: `sim_fleet.R${run}`, fleetSize: n, accounts: a, workload, rate: rate / k, ...scaled }
  const started: Started[] = []
  try {
    const start = (name: string, o: FleetSimInstancesOptions) => startNodeScript<Record<string, unknown>>(name, INSTANCES, o)
    const observer = await start('observer', { ...base, role: 'observer', first: 0, count: 1 })
    started.push(observer)
    const procs = Math.max(1, Math.min(peerProcs, n - 1))
    const peers: Started[] = []
    for (let p = 0, first = 1; p < procs; p++) {
      const count = Math.floor((n - 1) / procs) + (p < (n - 1) % procs ? 1 : 0)
      const peer = await start(`peers-${p}`, { ...base, role: 'peers', first, count })
      peers.push(peer)
      started.push(peer)
      first += count
    }
    // Everyone beats once more now that all are up, and the warm-up lets the first reports go round.
    await Promise.all(started.map((s) => s.ask!('beat')))
    await sleep(Math.max(warmupS * 1000, 2 * scaledColdMs + 1_000))
    await Promise.all(started.map((s) => s.ask!('mark')))
    await sleep(Math.max(durationS * 1000, 4 * scaledColdMs))
    const [o, ...ps] = await Promise.all(started.map((s) => s.ask!('report')))
    const p: Figures = {}
    for (const key of ['msgsOutPerS', 'entriesOutPerS', 'bytesOutPerS', 'cpuPct']) p[key] = ps.reduce((sum, x) => sum + (x![key] ?? 0), 0)
    p.members = Math.min(...ps.map((x) => x!.members ?? 0))
    // Reports to the observer: one per peer per C_eff that has news for it (at most one message: its owned accounts are few).
    const perReport = workload === 'all' ? (2 * a) / n : ((2 * a) / n) * (1 - Math.exp(-(rate * coldMs) / 1000 / n))
    const target = ((n - 1) * 1000 * Math.min(1, perReport) * Math.max(1, Math.ceil(perReport / MAX_ENTRIES_PER_MESSAGE))) / scaledColdMs
    return {
      instances: n,
      accounts: a,
      workload,
      timeScale: k,
      coldMs,
      peersTargetMsgsPerS: Math.round(target * 10) / 10,
      peers: p,
      observer: o!,
      loadavg: Math.round(loadavg()[0] * 10) / 10,
    }
  } finally {
    await Promise.all(started.map((s) => s.stop()))
  }
}

interface AppendFigures {
  events: number
  eventsPerSec: number
  appendP50Us: number
  appendP99Us: number
}

/** UsageRecorded appends (batches of 100, as the outbox sends them) from `k` processes into one stream. */
async function usageStream(nats: string, k: number, run: number): Promise<{ producers: number; eventsPerSec: number; perProducer: AppendFigures[] }> {
  const arg = { log: 'jetstream', nats, batch: 100, durationMs: durationS * 1000, shared: `fleetsim${run}`, accounts: 1000 }
  // The first creates the stream; the others join it.
  const first = runNodeJson<AppendFigures>(APPEND, arg)
  await sleep(500)
  const rest = Array.from({ length: k - 1 }, () => runNodeJson<AppendFigures>(APPEND, arg))
  const perProducer = await Promise.all([first, ...rest])
  return { producers: k, eventsPerSec: perProducer.reduce((s, r) => s + r.eventsPerSec, 0), perProducer }
}

const fmt = (x: number | undefined): string => (x === undefined || Number.isNaN(x) ? '–' : x.toLocaleString('en-US'))

function markdown(rows: SharingRow[], usage: Awaited<ReturnType<typeof usageStream>>[], info: Record<string, unknown>): string {
  const out = [
    `Fleet simulation, ${info.date}: ${info.nproc} × ${info.cpu}, load ${JSON.stringify(info.loadavgAtStart)} at start, ${JSON.stringify(info.loadavgAtEnd)} at the end; commit ${info.commit}${info.dirty ? ' (uncommitted changes)' : ''}; syncMs ${syncMs}, coldReportMs ${coldReportMs}, maxReportsPerSecond ${maxReportsPerSecond}, maxHeartbeatsPerSecond ${maxHeartbeatsPerSecond}, spread rate ${rate} calls/s per account, peers in ${peerProcs} processes, ${durationS} s windows after ${warmupS} s. Rates and the sharing's CPU "at real time" are the measured ones × k.`,
    '',
    '| instances | accounts | workload | k | C_eff ms | sharing CPU % of a core, at real time (measured) | own calls CPU % (measured) | reports in/s at real time (target) | limits msgs in/s at real time | entries in/s at real time | µs per report in | µs per entry in | heartbeats in/s at real time (every, ms) | delivery lag p50 / p99 / max ms | event-loop delay p99 ms | members heard | peers CPU % | load |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ]
  for (const r of rows) {
    const o = r.observer
    const k = r.timeScale
    const sharingUs = (o.sharingCpuPct / 100) * 1e6
    const perEntry = o.entriesInPerS > 0 ? sharingUs / o.entriesInPerS : Number.NaN
    const perReport = o.reportsInPerS > 0 ? sharingUs / o.reportsInPerS : Number.NaN
    const f1 = (x: number): string => (Number.isNaN(x) ? '–' : x.toFixed(1))
    out.push(
      `| ${r.instances} | ${fmt(r.accounts)} | ${r.workload} | ${k} | ${r.coldMs} | ${f1(o.sharingCpuPct * k)} (${o.sharingCpuPct}) | ${o.serveCpuPct} | ${fmt(o.reportsInPerS * k)} (${fmt(Math.round(r.peersTargetMsgsPerS * k))}) | ${fmt(o.msgsInPerS * k)} | ${fmt(o.entriesInPerS * k)} | ${f1(perReport)} | ${f1(perEntry)} | ${f1(o.heartbeatsInPerS * k)} (${Math.round(o.heartbeatEveryMs / k)}) | ${o.lagP50Ms} / ${o.lagP99Ms} / ${o.lagMaxMs} | ${o.eldP99Ms} | ${o.members} | ${r.peers.cpuPct} | ${r.loadavg} |`,
    )
  }
  out.push('', '| producers into one stream | UsageRecorded events/s acknowledged (batches of 100) | append p50 / p99 ms per producer |', '|---|---|---|')
  for (const u of usage) {
    const lat = u.perProducer.map((p) => `${(p.appendP50Us / 1000).toFixed(1)} / ${(p.appendP99Us / 1000).toFixed(1)}`).join('; ')
    out.push(`| ${u.producers} | ${fmt(u.eventsPerSec)} | ${lat} |`)
  }
  return out.join('\n')
}

const info = await machine()
log(`machine: ${info.nproc} × ${info.cpu}, load ${JSON.stringify(info.loadavgAtStart)}, commit ${info.commit}`)
const nats = await startNats()
const rows: SharingRow[] = []
const usage: Awaited<ReturnType<typeof usageStream>>[] = []
const started = Date.now()
try {
  let run = 0
  // A fleet of one: the observer's process with nobody to hear, the floor under every row.
  if (!values.instances || instances.includes(1)) {
    log(`baseline: a fleet of one, ${accounts[0]} accounts…`)
    rows.push(await sharing(nats.url, 1, accounts[0], 'spread', ++run))
  }
  for (const workload of workloads) {
    for (const a of accounts) {
      for (const n of instances.filter((x) => x > 1)) {
        run++
        log(`${n} instances, ${a} accounts, ${workload}…`)
        const row = await sharing(nats.url, n, a, workload, run)
        const o = row.observer
        log(
          `  k ${row.timeScale}: observer sharing ${o.sharingCpuPct} % CPU (own calls ${o.serveCpuPct} %), ${o.reportsInPerS} reports/s (target ${row.peersTargetMsgsPerS}), ${o.msgsInPerS} msgs/s and ${o.entriesInPerS} entries/s in, lag p50 ${o.lagP50Ms} p99 ${o.lagP99Ms} ms, ${o.members} members; peers ${row.peers.cpuPct} % CPU`,
        )
        rows.push(row)
      }
    }
  }
  for (const k of producers) {
    run++
    log(`UsageRecorded into one stream from ${k} producer(s)…`)
    const u = await usageStream(nats.url, k, run)
    log(`  ${u.eventsPerSec} events/s`)
    usage.push(u)
  }
} finally {
  await nats.stop()
}
const result = {
  machine: { ...info, loadavgAtEnd: loadavg().map((x) => Math.round(x * 100) / 100) },
  options: {
    instances,
    accounts,
    workloads,
    syncMs,
    coldReportMs,
    maxReportsPerSecond,
    maxHeartbeatsPerSecond,
    rate,
    peerProcs,
    timeScale: values['time-scale'],
    durationS,
    warmupS,
    producers,
  },
  elapsedS: Math.round((Date.now() - started) / 1000),
  sharing: rows,
  usage,
}
mkdirSync(RESULTS, { recursive: true })
writeFileSync(join(RESULTS, `${values.results}.json`), JSON.stringify(result, null, 2) + '\n')
const md = markdown(rows, usage, result.machine)
writeFileSync(join(RESULTS, `${values.results}.md`), md + '\n')
process.stdout.write(md + '\n')
log(`done in ${result.elapsedS} s; bench/results/${values.results}.json and .md written`)
process.exit(0)
