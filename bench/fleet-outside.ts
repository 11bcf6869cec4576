/**
 * The fleet's cost measured from outside: six `tollgate start` processes of the built tree on one
 * nats-server (one stream, one fleet), 200 cold accounts, and the CPU of each process from
 * /proc/PID/stat around a measured window. Three scenes, repeated round after round in alternating
 * order (the machine's 2 cores are shared, so what is compared is CPU per call, within a round):
 *
 * - `one serves`: the 200 accounts call instance 1 only, at a fixed rate (open loop); what
 *   instances 2–6, which serve none of those calls, spend per call the fleet serves, and
 *   instance 1's own CPU per call;
 * - `spread`: the same calls round robin over the six (each account's calls on every instance);
 *   the fleet's CPU per call;
 * - `fleets of one`: six more gateways, each on a stream (and fleet) of its own with 200 accounts of
 *   its own, each given the load one instance had in `spread`; their CPU per call. The ratio
 *   spread ÷ fleets of one is the fleet's cost over gateways that share nothing.
 *
 * Each round also starts with an idle window (no load anywhere): what each process spends doing
 * nothing (heartbeats, timers, NATS pings), to tell it from what the calls cost. The gateways'
 * /metrics are read around each window: fleet members, owned and hot accounts, limits entries and
 * messages in and out.
 *
 * Build first: `npm run build` (this runs `node bin/tollgate.js start --config …` of dist/ and
 * builds nothing). Then:
 *   npm run bench:fleet-outside -- [--rate 3500] [--rounds 3] [--warmup 5] [--duration 15] [--idle 10] [--results NAME]
 *   npm run bench:fleet-outside -- --usage-projectors 1 [--partitions 2] …   # only instance 6 projects usage (usage.project false on 1–5): docs/fleet.md, "Where usage is projected"; with P > 1 the others are not sent usage at all
 *   npm run bench:fleet-outside -- --profile [--profile-scene 'one serves'|spread] [--rounds 1]   # that scene alone, instances 1 and 2 under --cpu-prof: their top costs
 * Writes bench/results/<NAME>.json (default fleet-outside; with --profile, fleet-outside-profile).
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { parseArgs } from 'node:util'
import { findNatsServer, launch } from '../harness/nats-server.js'
import { freePort } from '../harness/free-port.js'
import { cpuMs, runToEnd, startNodeScript, startReady, type Started } from './lib/processes.js'
import { median } from './lib/measure.js'
import { formatProfile, summariseProfile } from './lib/cpu-profile.js'
import type { FleetLoadOptions, FleetLoadResult } from './load/open-loop-fleet.js'

const { values } = parseArgs({
  options: {
    rate: { type: 'string', default: '3500' },
    rounds: { type: 'string', default: '3' },
    warmup: { type: 'string', default: '5' },
    duration: { type: 'string', default: '15' },
    idle: { type: 'string', default: '10' },
    instances: { type: 'string', default: '6' },
    accounts: { type: 'string', default: '200' },
    /** How many of the fleet's instances project usage, the last ones (default all: usage.project's default). */
    'usage-projectors': { type: 'string' },
    /** events.partitions of the fleet's stream (the fleets of one keep 1). */
    partitions: { type: 'string', default: '1' },
    profile: { type: 'boolean', default: false },
    'profile-scene': { type: 'string', default: 'one serves' },
    results: { type: 'string' },
  },
})
const RATE = Number(values.rate)
const ROUNDS = Number(values.rounds)
const WARMUP_S = Number(values.warmup)
const DURATION_S = Number(values.duration)
const IDLE_S = Number(values.idle)
const N = Number(values.instances)
const ACCOUNTS = Number(values.accounts)
const PROJECTORS = values['usage-projectors'] === undefined ? N : Number(values['usage-projectors'])
if (!Number.isInteger(PROJECTORS) || PROJECTORS < 1 || PROJECTORS > N) {
  process.stderr.write(`--usage-projectors is 1 to ${N}, got ${values['usage-projectors']}\n`)
  process.exit(2)
}
const PARTITIONS = Number(values.partitions)
/** Whether fleet instance i (0-based) projects usage: the last PROJECTORS do. */
const projects = (i: number): boolean => i >= N - PROJECTORS
const PROFILE = values.profile
const PROFILED_SCENE = values['profile-scene'] as 'one serves' | 'spread'
if (!['one serves', 'spread'].includes(PROFILED_SCENE)) {
  process.stderr.write("--profile-scene is 'one serves' or 'spread'\n")
  process.exit(2)
}

const ROOT = join(import.meta.dirname, '..')
const BENCH = join(ROOT, 'bench')
const DIST = join(ROOT, 'dist')
const MAIN = join(ROOT, 'bin', 'tollgate.js')
const CATALOG = join(BENCH, 'targets', 'bench-plans.json')
const BODY = '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}'
if (!existsSync(join(DIST, 'src', 'cli', 'main.js'))) {
  process.stderr.write('bench:fleet-outside runs the built tree (node bin/tollgate.js start): run `npm run build` first\n')
  process.exit(2)
}

const log = (line: string): void => void process.stdout.write(`[fleet-outside] ${line}\n`)
const load1 = (): number => Math.round(loadavg()[0] * 100) / 100
const work = mkdtempSync(join(tmpdir(), 'tollgate-fleet-outside-'))
const started: Started[] = []
process.once('exit', () => rmSync(work, { recursive: true, force: true }))
const env = { TOLLGATE_SECRET: randomBytes(32).toString('hex'), LOG_LEVEL: 'info' }

interface Gateway {
  name: string
  pid: number
  port: number
  admin: string
  configPath: string
  apiKeys: string[]
}

/** A gateway's config: its own data folder and ports, on `stream` (and its own subject prefix: two streams may not hold one subject). */
function writeConfig(
  name: string,
  natsUrl: string,
  stream: string,
  prefix: string,
  stubHttp: string,
  stubWs: string,
  projectUsage = true,
  partitions = 1,
): string {
  const dataDir = join(work, name)
  const config = {
    listen: { host: '127.0.0.1', port: 0 },
    admin: { listen: { host: '127.0.0.1', port: 0 } },
    dataDir,
    shutdownMs: 3_000,
    events: { nats: natsUrl, stream, subjectPrefix: prefix, partitions },
    networks: { 'eth-1': { chainId: 1, upstreams: [{ url: stubHttp, ws: stubWs, kind: 'full', name: 'stub' }] } },
    plans: { catalog: CATALOG },
    usage: { project: projectUsage },
  }
  const path = join(work, `${name}.json`)
  writeFileSync(path, JSON.stringify(config, null, 2))
  return path
}

/** `node bin/tollgate.js start --config FILE`, ready when it logs "ready" (its port and admin listener from that line). */
async function startGateway(name: string, configPath: string, nodeFlags: string[] = []): Promise<Gateway> {
  const p = await startReady<{ http: string; admin: string; pid: number }>(name, process.execPath, [...nodeFlags, MAIN, 'start', '--config', configPath], {
    env,
    timeoutMs: 180_000,
    readyWhen: (line) => line.msg === 'ready',
  })
  started.push(p)
  if (p.info.pid !== p.pid) throw new Error(`${name}: the "ready" line came from pid ${p.info.pid}, not the process started (${p.pid})`)
  return { name, pid: p.pid, port: Number(new URL(p.info.http).port), admin: p.info.admin, configPath, apiKeys: [] }
}

/** ACCOUNTS accounts with keys on the event log of `configPath` (bench/targets/fleet-accounts.ts: what `tollgate accounts create` runs). */
async function createAccounts(configPath: string): Promise<string[]> {
  const out = await runToEnd(
    process.execPath,
    ['--import', 'tsx', join(BENCH, 'targets', 'fleet-accounts.ts'), JSON.stringify({ dist: DIST, config: configPath, accounts: ACCOUNTS, plan: 'bench' })],
    env,
  )
  return (JSON.parse(out.trim().split('\n').pop()!) as { apiKeys: string[] }).apiKeys
}

/** The unlabelled and `direction`-labelled fleet figures of a gateway's /metrics. */
async function fleetMetrics(g: Gateway): Promise<Record<string, number>> {
  const text = await (await fetch(`${g.admin}/metrics`)).text()
  const figures: Record<string, number> = {}
  let responses = 0
  for (const line of text.split('\n')) {
    if (line.startsWith('tollgate_http_responses_total')) responses += Number(line.slice(line.lastIndexOf(' ') + 1))
    const m = /^tollgate_fleet_(instances|owned_accounts|hot_accounts|limit_entries_total|limit_messages_total)(?:\{direction="(in|out)"\})? (\S+)$/.exec(line)
    if (m) figures[m[2] ? `${m[1].replace('limit_', '').replace('_total', '')}_${m[2]}` : m[1]] = Number(m[3])
  }
  figures.responses = responses
  return figures
}

async function metricsOf(gateways: Gateway[]): Promise<Array<Record<string, number>>> {
  return Promise.all(gateways.map(fleetMetrics))
}

/** Counters that grow (entries and messages, responses): after − before; gauges (members, owned, hot): as after. */
function deltas(before: Array<Record<string, number>>, after: Array<Record<string, number>>): Array<Record<string, number>> {
  return after.map((a, i) => {
    const d: Record<string, number> = {}
    for (const [k, v] of Object.entries(a)) d[k] = /_(in|out)$|^responses$/.test(k) ? v - (before[i][k] ?? 0) : v
    return d
  })
}

async function runLoad(o: FleetLoadOptions): Promise<FleetLoadResult> {
  const file = join(work, `load-${randomBytes(4).toString('hex')}.json`)
  writeFileSync(file, JSON.stringify(o))
  const out = await runToEnd(process.execPath, ['--import', 'tsx', join(BENCH, 'load', 'open-loop-fleet.ts'), file])
  return JSON.parse(out.trim().split('\n').pop()!) as FleetLoadResult
}

interface SceneResult {
  scene: string
  round: number
  load1: number
  calls: number
  achievedRps: number
  statusErrors: number
  unanswered: number
  p50Us: number
  p99Us: number
  completedByTarget: number[]
  cpuMs: number[]
  natsCpuMs: number
  loadGeneratorNote?: string
  metrics: Array<Record<string, number>>
}

const hrUs = (): number => Number(process.hrtime.bigint() / 1000n)
const profileWindows: Array<[number, number]> = []

/** A warm-up, then the measured window: each gateway's CPU and /metrics around the generator's run. */
async function scene(name: string, round: number, gateways: Gateway[], schedule: 'one' | 'spread', natsPid: number): Promise<SceneResult> {
  const targets = (schedule === 'one' ? gateways.slice(0, 1) : gateways).map((g) => ({ port: g.port, paths: g.apiKeys.map((k) => `/http/eth-1?apikey=${k}`) }))
  const connections = schedule === 'one' ? 48 : 12
  const base = { targets, schedule, body: BODY, rate: RATE, connections }
  await runLoad({ ...base, durationMs: WARMUP_S * 1000 })
  const m0 = await metricsOf(gateways)
  const cpu0 = gateways.map((g) => cpuMs(g.pid))
  const nats0 = cpuMs(natsPid)
  const at = load1()
  const from = hrUs()
  const r = await runLoad({ ...base, durationMs: DURATION_S * 1000 })
  if (name === PROFILED_SCENE) profileWindows.push([from, hrUs()])
  const cpu = gateways.map((g, i) => cpuMs(g.pid) - cpu0[i])
  const natsCpuMs = cpuMs(natsPid) - nats0
  const metrics = deltas(m0, await metricsOf(gateways))
  return {
    scene: name,
    round,
    load1: at,
    calls: r.completed,
    achievedRps: r.achievedRps,
    statusErrors: r.statusErrors,
    unanswered: r.unanswered,
    p50Us: r.p50Us,
    p99Us: r.p99Us,
    completedByTarget: r.completedByTarget,
    cpuMs: cpu,
    natsCpuMs,
    metrics,
  }
}

/** What each gateway spends with no load anywhere, in ms of CPU per second. */
async function idleWindow(gateways: Gateway[]): Promise<number[]> {
  const cpu0 = gateways.map((g) => cpuMs(g.pid))
  await new Promise((r) => setTimeout(r, IDLE_S * 1000))
  return gateways.map((g, i) => (cpuMs(g.pid) - cpu0[i]) / IDLE_S)
}

const us = (ms: number, calls: number): number => Math.round(((ms * 1000) / calls) * 100) / 100
const range = (xs: number[]): [number, number] => [Math.min(...xs), Math.max(...xs)]
const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0)
const r2 = (x: number): number => Math.round(x * 100) / 100

log(
  `load ${loadavg().map(r2).join(' ')} at the start; ${N} instances on one stream and ${N} fleets of one, ${ACCOUNTS} accounts each, ${RATE} calls/s; ${PROJECTORS === N ? 'every instance projects usage' : `usage projected by the last ${PROJECTORS} of the fleet`}`,
)
const natsPort = await freePort()
const natsStore = join(work, 'nats')
const nats = await launch(findNatsServer(), natsPort, natsStore)
const natsUrl = `nats://127.0.0.1:${natsPort}`
const natsPid = nats.pid!
const profileDir = join(work, 'profile')
try {
  const stub = await startNodeScript<{ port: number }>('stub', join(BENCH, 'stub', 'stub-upstream.ts'), 0)
  started.push(stub)
  const stubHttp = `http://127.0.0.1:${stub.info.port}/`
  const stubWs = `ws://127.0.0.1:${stub.info.port}/`

  // The fleet: six on stream FLEET. Accounts are made on instance 1's config before any starts, so
  // that each projects them before it serves.
  const fleetConfigs = Array.from({ length: N }, (_, i) => writeConfig(`fleet-${i + 1}`, natsUrl, 'FLEET', 'fleet', stubHttp, stubWs, projects(i), PARTITIONS))
  const fleetKeys = await createAccounts(fleetConfigs[0])
  log(`${fleetKeys.length} accounts on stream FLEET`)
  // A profile is of one scene of the fleet alone: the fleets of one are not started.
  const soloConfigs = Array.from({ length: PROFILE ? 0 : N }, (_, i) => writeConfig(`solo-${i + 1}`, natsUrl, `SOLO${i + 1}`, `solo${i + 1}`, stubHttp, stubWs))
  const soloKeys: string[][] = []
  for (const c of soloConfigs) soloKeys.push(await createAccounts(c))
  log(`${ACCOUNTS} accounts on each of streams SOLO1–SOLO${N}`)
  // One at a time: each loads the compiled tree and catches up; together they would fight for the cores.
  const fleet: Gateway[] = []
  for (let i = 0; i < N; i++) {
    const flags = PROFILE && i < 2 ? ['--cpu-prof', '--cpu-prof-dir', join(profileDir, String(i + 1))] : []
    fleet.push({ ...(await startGateway(`fleet-${i + 1}`, fleetConfigs[i], flags)), apiKeys: fleetKeys })
  }
  const solo: Gateway[] = []
  for (let i = 0; i < soloConfigs.length; i++) solo.push({ ...(await startGateway(`solo-${i + 1}`, soloConfigs[i])), apiKeys: soloKeys[i] })

  // Each member hears the others within a heartbeat or two; the check is what /metrics says.
  const deadline = Date.now() + 30_000
  for (;;) {
    const [f, s] = await Promise.all([metricsOf(fleet), metricsOf(solo)])
    const fleetSees = f.map((m) => m.instances)
    const soloSees = s.map((m) => m.instances)
    if (fleetSees.every((x) => x === N) && soloSees.every((x) => x === 1)) {
      log(`members as each instance hears them: fleet ${fleetSees.join(' ')}, fleets of one ${soloSees.join(' ')}`)
      break
    }
    if (Date.now() > deadline) throw new Error(`members not as expected after 30 s: fleet ${fleetSees.join(' ')}, fleets of one ${soloSees.join(' ')}`)
    await new Promise((r) => setTimeout(r, 500))
  }

  const results: SceneResult[] = []
  const idle: Array<{ round: number; load1: number; fleetMsPerS: number[]; soloMsPerS: number[] }> = []
  const orders: Array<Array<'one serves' | 'spread' | 'fleets of one'>> = [
    ['one serves', 'spread', 'fleets of one'],
    ['fleets of one', 'spread', 'one serves'],
  ]
  for (let round = 1; round <= ROUNDS; round++) {
    const at = load1()
    const both = await idleWindow([...fleet, ...solo])
    idle.push({ round, load1: at, fleetMsPerS: both.slice(0, N).map(r2), soloMsPerS: both.slice(N).map(r2) })
    log(`round ${round} idle (load ${at}): ms of CPU a second, fleet ${both.slice(0, N).map(r2).join(' ')}; fleets of one ${both.slice(N).map(r2).join(' ')}`)
    for (const name of PROFILE ? [PROFILED_SCENE] : orders[(round - 1) % 2]) {
      const r =
        name === 'one serves'
          ? await scene(name, round, fleet, 'one', natsPid)
          : name === 'spread'
            ? await scene(name, round, fleet, 'spread', natsPid)
            : await scene(name, round, solo, 'spread', natsPid)
      results.push(r)
      const perCall = r.cpuMs.map((ms) => us(ms, r.calls))
      const total = us(sum(r.cpuMs), r.calls)
      const entriesIn = r.metrics.map((m) => m.entries_in ?? 0)
      const messagesIn = r.metrics.map((m) => m.messages_in ?? 0)
      log(
        `round ${round} ${name} (load ${r.load1}): ${r.calls} calls (${r.achievedRps}/s, ${r.statusErrors} errors, ${r.unanswered} unanswered, p50 ${r.p50Us} us, p99 ${r.p99Us} us); ` +
          `CPU us per call by instance ${perCall.join(' ')}, all ${total}; nats ${us(r.natsCpuMs, r.calls)}; entries in ${entriesIn.join(' ')}; messages in ${messagesIn.join(' ')}`,
      )
    }
  }

  // The figures of the two checks, per round, then medians and ranges.
  const byScene = (name: string): SceneResult[] => results.filter((r) => r.scene === name)
  const fleetUs = (r: SceneResult): number => us(sum(r.cpuMs), r.calls)
  const one = byScene('one serves')
  const idleOthers = one.map((r) => r.cpuMs.slice(1).map((ms) => us(ms, r.calls)))
  const idleOthersAboveIdle = one.map((r) => {
    const i = idle.find((x) => x.round === r.round)!
    return r.cpuMs.slice(1).map((ms, k) => us(ms - i.fleetMsPerS[k + 1] * DURATION_S, r.calls))
  })
  const servingUs = one.map((r) => us(r.cpuMs[0], r.calls))
  // With --usage-projectors, instances 2–6 split into those that skip usage and those that project it.
  const others = (perRound: number[][], projecting: boolean): number[] => perRound.flatMap((xs) => xs.filter((_, k) => projects(k + 1) === projecting))
  const split = (perRound: number[][]) =>
    PROJECTORS === N
      ? undefined
      : {
          skippingUsage: { median: median(others(perRound, false)), range: range(others(perRound, false)) },
          projectingUsage: { median: median(others(perRound, true)), range: range(others(perRound, true)) },
        }
  const spread = byScene('spread')
  const solos = byScene('fleets of one')
  const ratios = spread.flatMap((s) => {
    const alone = solos.find((x) => x.round === s.round)
    return alone === undefined ? [] : [r2(fleetUs(s) / fleetUs(alone))]
  })
  const summary = {
    rate: RATE,
    instances: N,
    accounts: ACCOUNTS,
    usageProjectors: PROJECTORS,
    partitions: PARTITIONS,
    rounds: ROUNDS,
    warmupS: WARMUP_S,
    durationS: DURATION_S,
    idleS: IDLE_S,
    profiled: PROFILE,
    loadAverage: { start: idle[0]?.load1, perScene: results.map((r) => r.load1) },
    oneServes: {
      othersUsPerCall: { median: median(idleOthers.flat()), range: range(idleOthers.flat()), perRound: idleOthers },
      othersUsPerCallAboveIdle: { median: median(idleOthersAboveIdle.flat()), range: range(idleOthersAboveIdle.flat()), perRound: idleOthersAboveIdle },
      othersByUsage: split(idleOthers),
      othersByUsageAboveIdle: split(idleOthersAboveIdle),
      servingUsPerCall: { median: median(servingUs), range: range(servingUs) },
      check: 'each of instances 2–6 at most 5 us per call',
      met: Math.max(...idleOthers.flat()) <= 5,
    },
    spread: { fleetUsPerCall: { median: median(spread.map(fleetUs)), range: range(spread.map(fleetUs)) } },
    fleetsOfOne: { fleetUsPerCall: { median: median(solos.map(fleetUs)), range: range(solos.map(fleetUs)) } },
    spreadOverFleetsOfOne: { median: median(ratios), range: range(ratios), perRound: ratios, check: 'at most 1.2x', met: Math.max(...ratios) <= 1.2 },
    idle,
    scenes: results,
    profiles: [] as string[],
  }
  log(
    `one serves: instances 2-${N} ${summary.oneServes.othersUsPerCall.median} us per call (${summary.oneServes.othersUsPerCall.range.join('–')}; ` +
      `above their idle ${summary.oneServes.othersUsPerCallAboveIdle.median}, ${summary.oneServes.othersUsPerCallAboveIdle.range.join('–')}), ` +
      `instance 1 ${summary.oneServes.servingUsPerCall.median} (${summary.oneServes.servingUsPerCall.range.join('–')}): ${summary.oneServes.met ? 'met' : 'not met'} (<= 5)`,
  )
  const byUsage = summary.oneServes.othersByUsage
  const byUsageAbove = summary.oneServes.othersByUsageAboveIdle
  if (byUsage !== undefined && byUsageAbove !== undefined) {
    log(
      `one serves, by usage.project: skipping usage ${byUsage.skippingUsage.median} us per call (${byUsage.skippingUsage.range.join('–')}; above idle ${byUsageAbove.skippingUsage.median}, ${byUsageAbove.skippingUsage.range.join('–')}), ` +
        `projecting usage ${byUsage.projectingUsage.median} (${byUsage.projectingUsage.range.join('–')}; above idle ${byUsageAbove.projectingUsage.median}, ${byUsageAbove.projectingUsage.range.join('–')})`,
    )
  }
  log(
    `spread ${summary.spread.fleetUsPerCall.median} us per call (${summary.spread.fleetUsPerCall.range.join('–')}), fleets of one ${summary.fleetsOfOne.fleetUsPerCall.median} ` +
      `(${summary.fleetsOfOne.fleetUsPerCall.range.join('–')}): ratio ${summary.spreadOverFleetsOfOne.median}x (${summary.spreadOverFleetsOfOne.range.join('–')}), ` +
      `${summary.spreadOverFleetsOfOne.met ? 'met' : 'not met'} (<= 1.2x)`,
  )

  await Promise.all(started.splice(0).map((p) => p.stop()))
  for (const instance of PROFILE ? [1, 2] : []) {
    const dir = join(profileDir, String(instance))
    const file = existsSync(dir) ? readdirSync(dir).find((f) => f.endsWith('.cpuprofile')) : undefined
    if (file === undefined) log(`instance ${instance}: no profile was written`)
    else {
      const text = `instance ${instance}, during ${PROFILED_SCENE}:\n${formatProfile(summariseProfile(join(dir, file), 30, profileWindows))}`
      summary.profiles.push(text)
      process.stdout.write(`${text}\n`)
    }
  }
  const out = join(BENCH, 'results', `${values.results ?? (PROFILE ? 'fleet-outside-profile' : 'fleet-outside')}.json`)
  writeFileSync(out, `${JSON.stringify(summary, null, 2)}\n`)
  log(`written ${out}`)
} finally {
  await Promise.all(started.map((p) => p.stop()))
  nats.kill('SIGTERM')
}
process.exit(0)
