/**
 * Usage by partition (events.partitions): acknowledged UsageRecorded a second appended by
 * producer processes (each a JetStreamLog as the gateway's outbox uses it: appends of `--batch`
 * events, one after the other), then `replay` of the whole log into a fresh state store (the
 * partitions read in parallel), at each P, on one nats-server and on a 3-node cluster (replicas 3).
 * The same events at every P (ids are deterministic), so the replays' digests must be equal.
 *
 * CPU is CPU time, not wall time: the producers' and the replay's process.cpuUsage, and each
 * nats-server's utime + stime from /proc/<pid>/stat (its own pid), per event. The events are made
 * before the clock starts: what is measured is the log, not the SHA-256 of the ids.
 *
 * `node --import tsx bench/usage-partitions.ts [--partitions 1,2,4] [--events 60000] [--producers 2]
 *  [--accounts 2000] [--batch 100] [--targets single,cluster] [--rounds 1]`; prints the medians of the
 * rounds, writes bench/results/usage-partitions-latest.json.
 */
import { type ChildProcess, fork } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { freePort } from '../harness/free-port.js'
import { findNatsServer, launch } from '../harness/nats-server.js'
import { JetStreamLog } from '../src/events/jetstream-log.js'
import { makeEvent } from '../src/events/make-event.js'
import type { TollgateEvent } from '../src/events/types.js'
import { replay } from '../src/projections/replay.js'
import { startNatsCluster } from '../test/helpers/nats-cluster.js'

const RESULTS = join(import.meta.dirname, 'results')
/** Clock ticks a second of /proc/<pid>/stat (USER_HZ, 100 on Linux). */
const TICKS = 100

interface ProduceJob {
  role: 'produce'
  servers: string[]
  stream: string
  subjectPrefix: string
  replicas: number
  partitions: number
  producer: number
  events: number
  accounts: number
  batch: number
}
interface ReplayJob {
  role: 'replay'
  servers: string[]
  stream: string
  subjectPrefix: string
  replicas: number
  partitions: number
}
type Job = ProduceJob | ReplayJob
interface Measured {
  events: number
  ms: number
  cpuMs: number
  digest?: string
}

/** The usage of producer `producer`: instance `bench-<producer>`, intervals a second apart, spread over the accounts. */
function usageOf(job: ProduceJob): TollgateEvent[] {
  const out: TollgateEvent[] = []
  for (let i = 0; i < job.events; i++) {
    const account = i % job.accounts
    const interval = Math.floor(i / job.accounts)
    out.push(
      makeEvent(
        {
          type: 'UsageRecorded',
          accountId: `acc_${account}`,
          keyId: `key_${account}`,
          network: 'eth-1',
          kind: 'full',
          instance: `bench-${job.producer}`,
          intervalStart: 1_700_000_000_000 + interval * 1000,
          intervalMs: 1000,
          requests: 1 + (i % 17),
          errors: i % 3,
          bytesIn: 800,
          bytesOut: 1200,
          units: 26 * (1 + (i % 17)),
        },
        1_700_000_000_000 + interval * 1000 + 1000,
      ),
    )
  }
  return out
}

async function child(job: Job): Promise<void> {
  const log = await JetStreamLog.connect({
    servers: job.servers,
    stream: job.stream,
    subjectPrefix: job.subjectPrefix,
    replicas: job.replicas,
    partitions: job.partitions,
    name: 'bench',
  })
  if (job.role === 'produce') {
    const events = usageOf(job)
    process.send!({ ready: true })
    await new Promise<void>((resolve) => process.once('message', () => resolve()))
    const cpu = process.cpuUsage()
    const t0 = performance.now()
    for (let i = 0; i < events.length; i += job.batch) await log.append(events.slice(i, i + job.batch))
    const ms = performance.now() - t0
    const used = process.cpuUsage(cpu)
    process.send!({ events: events.length, ms, cpuMs: (used.user + used.system) / 1000 } satisfies Measured)
  } else {
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-bench-partitions-'))
    const cpu = process.cpuUsage()
    const t0 = performance.now()
    const { events, digest } = await replay(join(dir, 'state'), log)
    const ms = performance.now() - t0
    const used = process.cpuUsage(cpu)
    rmSync(dir, { recursive: true, force: true })
    process.send!({ events, ms, cpuMs: (used.user + used.system) / 1000, digest } satisfies Measured)
  }
  await log.close()
  process.exit(0)
}

/** CPU time of a process so far, in ms (its own pid's /proc stat). */
function cpuMsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS
}

function run(job: Job): { proc: ChildProcess; ready: Promise<void>; result: Promise<Measured> } {
  const proc = fork(import.meta.filename, [JSON.stringify(job)], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  let ready!: () => void
  const readyP = new Promise<void>((resolve) => (ready = resolve))
  const result = new Promise<Measured>((resolve, reject) => {
    proc.on('message', (m: { ready?: boolean } & Measured) => (m.ready ? ready() : resolve(m)))
    proc.once('exit', (code) => (code === 0 ? undefined : reject(new Error(`${job.role} exited with ${code}`))))
  })
  if (job.role === 'replay') ready()
  return { proc, ready: readyP, result }
}

interface Target {
  name: string
  servers: string[]
  replicas: number
  pids(): number[]
  stop(): Promise<void>
}

async function single(): Promise<Target> {
  const storeDir = mkdtempSync(join(tmpdir(), 'tollgate-bench-nats-'))
  const port = await freePort()
  const proc = await launch(findNatsServer(), port, storeDir)
  return {
    name: 'one nats-server',
    servers: [`nats://127.0.0.1:${port}`],
    replicas: 1,
    pids: () => [proc.pid!],
    async stop() {
      const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()))
      proc.kill('SIGTERM')
      await exited
      rmSync(storeDir, { recursive: true, force: true })
    },
  }
}

async function cluster(): Promise<Target> {
  const c = await startNatsCluster(3)
  return { name: '3-node cluster (R3)', servers: c.urls, replicas: 3, pids: () => c.nodes.map((n) => n.pid!), stop: () => c.stop() }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      partitions: { type: 'string', default: '1,2,4' },
      events: { type: 'string', default: '60000' },
      producers: { type: 'string', default: '2' },
      accounts: { type: 'string', default: '2000' },
      batch: { type: 'string', default: '100' },
      targets: { type: 'string', default: 'single,cluster' },
      rounds: { type: 'string', default: '1' },
    },
  })
  const rounds = Number(values.rounds)
  const ps = values.partitions.split(',').map(Number)
  const producers = Number(values.producers)
  const perProducer = Math.ceil(Number(values.events) / producers)
  const rows: Record<string, unknown>[] = []
  const loadBefore = loadavg()
  for (const name of values.targets.split(',')) {
    const target = name === 'cluster' ? await cluster() : await single()
    try {
      // Rounds go through the Ps in turn, each round in another order (the load of a shared machine
      // drifts), each measurement on streams of its own (the same events again would be duplicates).
      const order = Array.from({ length: rounds }, (_, r) => ps.map((_, i) => ps[(i + r) % ps.length]!)).flat()
      for (const [m, partitions] of order.entries()) {
        const names = { stream: `UP${partitions}R${m}`, subjectPrefix: `up${partitions}r${m}` }
        const base = { servers: target.servers, replicas: target.replicas, partitions, ...names }
        // The streams made before the clock starts (by a log opened and closed); a cluster just
        // started may not have elected its JetStream leader yet.
        for (let attempt = 1; ; attempt++) {
          try {
            await (await JetStreamLog.connect({ ...base, name: 'bench setup' })).close()
            break
          } catch (err) {
            if (attempt >= 20) throw err
            await new Promise((resolve) => setTimeout(resolve, 1000))
          }
        }
        const jobs = Array.from({ length: producers }, (_, producer) =>
          run({ role: 'produce', ...base, producer, events: perProducer, accounts: Number(values.accounts), batch: Number(values.batch) }),
        )
        await Promise.all(jobs.map((j) => j.ready))
        const server0 = target.pids().map(cpuMsOf)
        const t0 = performance.now()
        for (const j of jobs) j.proc.send('go')
        const produced = await Promise.all(jobs.map((j) => j.result))
        const publishMs = performance.now() - t0
        const serverPublish = target.pids().reduce((sum, pid, i) => sum + cpuMsOf(pid) - server0[i]!, 0)
        const events = produced.reduce((n, p) => n + p.events, 0)
        const clientPublish = produced.reduce((n, p) => n + p.cpuMs, 0)

        const server1 = target.pids().map(cpuMsOf)
        const replayed = await run({ role: 'replay', ...base }).result
        const serverReplay = target.pids().reduce((sum, pid, i) => sum + cpuMsOf(pid) - server1[i]!, 0)
        const row = {
          target: target.name,
          partitions,
          events,
          publishPerSec: Math.round((events * 1000) / publishMs),
          publishCpuUsPerEvent: { producers: round((clientPublish * 1000) / events), servers: round((serverPublish * 1000) / events) },
          replayPerSec: Math.round((replayed.events * 1000) / replayed.ms),
          replayCpuUsPerEvent: { replay: round((replayed.cpuMs * 1000) / replayed.events), servers: round((serverReplay * 1000) / replayed.events) },
          replayed: replayed.events,
          digest: replayed.digest,
        }
        rows.push(row)
        process.stderr.write(`[bench:partitions] ${JSON.stringify(row)}\n`)
      }
    } finally {
      await target.stop()
    }
  }
  const digests = new Set(rows.map((r) => r.digest))
  const med = (xs: number[]): number => {
    const sorted = [...xs].sort((a, b) => a - b)
    const mid = Math.floor(sorted.length / 2)
    return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
  }
  const summary = []
  for (const targetName of new Set(rows.map((r) => r.target as string))) {
    for (const partitions of ps) {
      const of = rows.filter((r) => r.target === targetName && r.partitions === partitions) as any[]
      summary.push({
        target: targetName,
        partitions,
        rounds: of.length,
        events: of[0].events,
        publishPerSec: Math.round(med(of.map((r) => r.publishPerSec))),
        publishCpuUsPerEvent: {
          producers: round(med(of.map((r) => r.publishCpuUsPerEvent.producers))),
          servers: round(med(of.map((r) => r.publishCpuUsPerEvent.servers))),
        },
        replayPerSec: Math.round(med(of.map((r) => r.replayPerSec))),
        replayCpuUsPerEvent: {
          replay: round(med(of.map((r) => r.replayCpuUsPerEvent.replay))),
          servers: round(med(of.map((r) => r.replayCpuUsPerEvent.servers))),
        },
      })
    }
  }
  const out = {
    summary,
    when: new Date().toISOString(),
    loadavgBefore: loadBefore,
    loadavgAfter: loadavg(),
    producers,
    batch: Number(values.batch),
    rows,
    sameDigest: digests.size === 1,
  }
  mkdirSync(RESULTS, { recursive: true })
  writeFileSync(join(RESULTS, 'usage-partitions-latest.json'), JSON.stringify(out, null, 2) + '\n')
  process.stdout.write(
    `medians of ${rounds} round(s)\n| target | P | events | publish (ack/s) | CPU µs/event: producers + servers | replay (events/s) | CPU µs/event: replay + servers |\n|---|---|---|---|---|---|---|\n`,
  )
  for (const r of summary as any[]) {
    process.stdout.write(
      `| ${r.target} | ${r.partitions} | ${r.events} | ${r.publishPerSec} | ${r.publishCpuUsPerEvent.producers} + ${r.publishCpuUsPerEvent.servers} | ${r.replayPerSec} | ${r.replayCpuUsPerEvent.replay} + ${r.replayCpuUsPerEvent.servers} |\n`,
    )
  }
  process.stdout.write(
    `load average before ${loadBefore.map(round).join(' ')}, after ${loadavg().map(round).join(' ')}; the same digest at every P: ${out.sameDigest}\n`,
  )
}

function round(n: number): number {
  return Math.round(n * 100) / 100
}

const job = process.argv[2]?.startsWith('{') ? (JSON.parse(process.argv[2]) as Job) : undefined
if (job) await child(job)
else await main()
