import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { startNats } from '../harness/nats-server.js'
import { JetStreamLog } from '../src/events/jetstream-log.js'
import { formatProfile, summariseProfile } from './lib/cpu-profile.js'
import { intervalUsage } from './lib/interval-usage.js'
import { cpuMs, startNodeScript, type Started } from './lib/processes.js'

/**
 * What following the log costs an instance that serves none of the calls: the usage of
 * `--instances` serving instances (each appending one UsageRecorded per account every second, in
 * batches of 100, as an outbox does) followed by projector processes into state stores of their
 * own, one per tree given (`--trees`, default this one), all on one stream at once: the builds
 * compared take the same events at the same time, so what is compared is their CPU per event in
 * one window (on 2 shared cores, a ratio within the run, not a rate across runs).
 *
 *   npm run bench:follow-cost -- [--trees .,/path/to/other/checkout] [--accounts 200] [--instances 1] [--seconds 20] [--rounds 3] [--results NAME]
 *   npm run bench:follow-cost -- --trees .,. --usage-commit-ms 0,500    # one build, two settings
 *   npm run bench:follow-cost -- --profile    # each follower under --cpu-prof: its top costs printed at the end
 * Writes bench/results/<NAME>.json (default follow-cost).
 */
const { values } = parseArgs({
  options: {
    trees: { type: 'string', default: '.' },
    accounts: { type: 'string', default: '200' },
    instances: { type: 'string', default: '1' },
    seconds: { type: 'string', default: '20' },
    warmup: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    results: { type: 'string', default: 'follow-cost' },
    profile: { type: 'boolean', default: false },
    // The projector's usageCommitMs of each tree, in --trees order (default: its own default).
    'usage-commit-ms': { type: 'string' },
  },
})
const TREES = values.trees.split(',').map((tree) => resolve(tree))
const ACCOUNTS = Number(values.accounts)
const INSTANCES = Number(values.instances)
const SECONDS = Number(values.seconds)
const WARMUP_S = Number(values.warmup)
const ROUNDS = Number(values.rounds)
const OUTBOX_BATCH = 100

const say = (line: string): void => void process.stdout.write(`[follow-cost] ${line}\n`)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const work = mkdtempSync(join(tmpdir(), 'tollgate-follow-cost-'))
const nats = await startNats()
const names = { stream: 'FOLLOW', subjectPrefix: 'follow' }
const writer = await JetStreamLog.connect({ servers: nats.url, replicas: 1, ...names })

const followers: Started[] = []
const USAGE_COMMIT_MS = values['usage-commit-ms']?.split(',')
for (const [i, root] of TREES.entries()) {
  const dir = join(work, `state-${i}`)
  mkdirSync(dir)
  const flags = values.profile ? ['--cpu-prof', '--cpu-prof-dir', join(work, `profile-${i}`)] : []
  followers.push(
    await startNodeScript(
      `follower ${root}`,
      join(import.meta.dirname, 'targets', 'log-follower.ts'),
      { root, servers: nats.url, ...names, dir, usageCommitMs: USAGE_COMMIT_MS?.[i] },
      flags,
    ),
  )
}

/** Every second, each serving instance's usage of the second before: one event per account. */
let second = 0
let appended = 0
let publishing = true
const publisher = (async () => {
  const start = Date.now()
  while (publishing) {
    const intervalStart = 1_700_000_000_000 + second * 1000
    for (let instance = 0; instance < INSTANCES; instance++) {
      const events = intervalUsage(intervalStart, ACCOUNTS, `i${instance}`)
      for (let i = 0; i < events.length; i += OUTBOX_BATCH) await writer.append(events.slice(i, i + OUTBOX_BATCH))
      appended += events.length
    }
    second++
    await sleep(Math.max(0, start + second * 1000 - Date.now()))
  }
})()

const progress = async (f: Started): Promise<{ applied: number; writes: number }> => (await f.ask!('applied')) as { applied: number; writes: number }
const rounds: Array<{ load1: number; events: number; usPerEvent: number[]; eventsPerWrite: number[]; serverUsPerEvent: number; behind: number[] }> = []
await sleep(WARMUP_S * 1000)
for (let round = 1; round <= ROUNDS; round++) {
  const cpu0 = followers.map((f) => cpuMs(f.pid))
  const server0 = cpuMs(nats.pid!)
  const at0 = await Promise.all(followers.map(progress))
  const appended0 = appended
  await sleep(SECONDS * 1000)
  const cpu1 = followers.map((f) => cpuMs(f.pid))
  const serverUsPerEvent = Math.round((((cpuMs(nats.pid!) - server0) * 1000) / Math.max(1, appended - appended0)) * 100) / 100
  const at1 = await Promise.all(followers.map(progress))
  const events = at1.map((a, i) => a.applied - at0[i]!.applied)
  const eventsPerWrite = at1.map((a, i) => Math.round((events[i]! / Math.max(1, a.writes - at0[i]!.writes)) * 10) / 10)
  const usPerEvent = followers.map((_, i) => Math.round((((cpu1[i]! - cpu0[i]!) * 1000) / Math.max(1, events[i]!)) * 100) / 100)
  const behind = at1.map((a) => appended - a.applied)
  const msPerSecond = followers.map((_, i) => Math.round((cpu1[i]! - cpu0[i]!) / SECONDS))
  const load1 = Math.round(loadavg()[0] * 100) / 100
  rounds.push({ load1, events: appended - appended0, usPerEvent, eventsPerWrite, serverUsPerEvent, behind })
  say(
    `round ${round} (load ${load1}): ${appended - appended0} events appended; CPU µs per event applied ${usPerEvent.join(' / ')}; events per transaction ${eventsPerWrite.join(' / ')}; CPU ms a second ${msPerSecond.join(' / ')}; nats-server µs per event appended ${serverUsPerEvent} (its publishes and every follower's reads); behind at the end ${behind.join(' / ')}`,
  )
}
publishing = false
await publisher

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const medians = TREES.map((_, i) => median(rounds.map((r) => r.usPerEvent[i]!)))
say(`medians, CPU µs per event: ${TREES.map((t, i) => `${t} ${medians[i]}`).join('; ')}`)
if (TREES.length > 1) say(`ratio ${TREES[1]} ÷ ${TREES[0]}: ${Math.round((medians[1]! / medians[0]!) * 1000) / 1000}x`)
const out = join(import.meta.dirname, 'results', `${values.results}.json`)
writeFileSync(out, `${JSON.stringify({ trees: TREES, accounts: ACCOUNTS, instances: INSTANCES, seconds: SECONDS, rounds, medians }, null, 2)}\n`)
say(`written ${out}`)

for (const f of followers) await f.stop()
if (values.profile) {
  const { readdirSync } = await import('node:fs')
  for (const [i, root] of TREES.entries()) {
    const folder = join(work, `profile-${i}`)
    for (const file of readdirSync(folder)) say(`profile of the follower of ${root}:\n${formatProfile(summariseProfile(join(folder, file), 20))}`)
  }
}
await writer.close()
await nats.stop()
rmSync(work, { recursive: true, force: true })
