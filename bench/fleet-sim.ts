/**
 * `npm run bench:fleet-sim`: what sharing limits costs a fleet of 10, 30 and 100 instances on one
 * local nats-server, with 1,000 and 10,000 active accounts, and how many usage events one JetStream
 * stream takes. The figures and the capacity model drawn from them are in docs/fleet.md.
 *
 * Per configuration (instances N × accounts A × workload), two processes: the N-1 peers (virtual
 * instances, the gateway's own Fleet and FleetBus, publishing every syncMs) and one observer (an
 * instance that also reads everyone, with a real AccountActor per account): see
 * bench/scenarios/fleet-sim-instances.ts. The observer's process holds that one instance only, so
 * its CPU is what limit sharing costs an instance. Then UsageRecorded appends to one stream from
 * 1, 2 and 4 producer processes at once.
 *
 * Options: --quick (shorter windows, 10 and 30 instances, 1 and 2 producers), --instances 10,30,100,
 * --accounts 1000,10000, --workloads spread,all, --sync-ms 50, --rate 10 (calls a second per
 * account, spread workload), --duration S, --warmup S, --results NAME (bench/results/NAME.json and
 * .md; default fleet-sim).
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

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    instances: { type: 'string' },
    accounts: { type: 'string', default: '1000,10000' },
    workloads: { type: 'string', default: 'spread,all' },
    'sync-ms': { type: 'string', default: '50' },
    rate: { type: 'string', default: '10' },
    duration: { type: 'string' },
    warmup: { type: 'string' },
    results: { type: 'string', default: 'fleet-sim' },
  },
})
const list = (s: string): number[] => s.split(',').map(Number)
const quick = values.quick
const instances = list(values.instances ?? (quick ? '10,30' : '10,30,100'))
const accounts = list(values.accounts)
const workloads = values.workloads.split(',') as FleetSimInstancesOptions['workload'][]
const syncMs = Number(values['sync-ms'])
const rate = Number(values.rate)
const durationS = Number(values.duration ?? (quick ? 3 : 8))
const warmupS = Number(values.warmup ?? (quick ? 2 : 3))
const producers = quick ? [1, 2] : [1, 2, 4]

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
  /** What the peers were to publish: N-1 instances × 1000/syncMs syncs, each in messages of at most MAX_ENTRIES_PER_MESSAGE. */
  peersTargetMsgsPerS: number
  peers: Figures
  observer: Figures
  /** The 1-minute load average of the machine when the row was measured (2 cores: above 2, every process waits for a core). */
  loadavg: number
}

async function sharing(nats: string, n: number, a: number, workload: FleetSimInstancesOptions['workload'], run: number): Promise<SharingRow> {
  const base = { nats, subjectRoot: `sim_fleet.R${run}`, fleetSize: n, accounts: a, syncMs, workload, rate }
  const started: Started[] = []
  try {
    const start = (name: string, o: FleetSimInstancesOptions) => startNodeScript<Record<string, unknown>>(name, INSTANCES, o)
    const peers = await start('peers', { ...base, role: 'peers', first: 1, count: n - 1 })
    started.push(peers)
    const observer = await start('observer', { ...base, role: 'observer', first: 0, count: 1 })
    started.push(observer)
    // Heartbeats every second: after a warm-up every instance has heard the others.
    await sleep(warmupS * 1000)
    await Promise.all([peers.ask!('mark'), observer.ask!('mark')])
    await sleep(durationS * 1000)
    const [p, o] = await Promise.all([peers.ask!('report'), observer.ask!('report')])
    const entries = workload === 'all' ? a + 1 : a * (1 - Math.exp(-(rate * syncMs) / 1000 / n)) + 1
    const target = Math.round((((n - 1) * 1000) / syncMs) * Math.ceil(entries / MAX_ENTRIES_PER_MESSAGE))
    return { instances: n, accounts: a, workload, peersTargetMsgsPerS: target, peers: p, observer: o, loadavg: Math.round(loadavg()[0] * 10) / 10 }
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
    `Fleet simulation, ${info.date}: ${info.nproc} × ${info.cpu}, load ${JSON.stringify(info.loadavgAtStart)} at start, ${JSON.stringify(info.loadavgAtEnd)} at the end; commit ${info.commit}${info.dirty ? ' (uncommitted changes)' : ''}; syncMs ${syncMs}, spread rate ${rate} calls/s per account, ${durationS} s windows after ${warmupS} s.`,
    '',
    '| instances | accounts | workload | observer CPU % of a core | µs CPU per entry in | limits msgs in/s | entries in/s (of published) | KB in/s | msgs out/s | KB out/s | delivery lag p50 / p99 / max ms | event-loop delay p99 ms | peers published msgs/s (of target) | peers CPU % | load |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ]
  for (const r of rows) {
    const o = r.observer
    const perEntry = o.entriesInPerS > 0 ? ((o.cpuPct / 100) * 1e6) / o.entriesInPerS : Number.NaN
    out.push(
      `| ${r.instances} | ${fmt(r.accounts)} | ${r.workload} | ${o.cpuPct} | ${Number.isNaN(perEntry) ? '–' : perEntry.toFixed(1)} | ${fmt(o.msgsInPerS)} | ${fmt(o.entriesInPerS)} (${fmt(r.peers.entriesOutPerS)}) | ${fmt(Math.round(o.bytesInPerS / 1024))} | ${o.msgsOutPerS} | ${fmt(Math.round(o.bytesOutPerS / 1024))} | ${o.lagP50Ms} / ${o.lagP99Ms} / ${o.lagMaxMs} | ${o.eldP99Ms} | ${fmt(r.peers.msgsOutPerS)} (${fmt(r.peersTargetMsgsPerS)}) | ${r.peers.cpuPct} | ${r.loadavg} |`,
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
          `  observer ${o.cpuPct} % CPU, ${o.msgsInPerS} msgs/s and ${o.entriesInPerS} entries/s in, lag p50 ${o.lagP50Ms} p99 ${o.lagP99Ms} ms; peers ${row.peers.msgsOutPerS} of ${row.peersTargetMsgsPerS} msgs/s`,
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
  options: { instances, accounts, workloads, syncMs, rate, durationS, warmupS, producers },
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
