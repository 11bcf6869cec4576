/**
 * Virtual instances of a fleet for `npm run bench:fleet-sim` (bench/fleet-sim.ts): each one is the
 * gateway's own Fleet on its own FleetBus (its own NATS connection), as src/main/start-gateway.ts
 * makes them; only what they serve is simulated (which accounts called each instance in an
 * interval).
 *
 * Two roles:
 * - `observer`: one instance that does all an instance does, with a real AccountActor per account: its
 *   calls go through AccountActor.admit, what the others admitted through AccountActor.consumedElsewhere.
 *   Its process holds nothing else, so its CPU is what limit sharing costs one instance.
 * - `peers`: the other instances of the fleet, many in one process (and the peers split over
 *   several processes). They announce themselves and publish their consumption through Fleet.sync,
 *   exactly as instances do, but do not subscribe to the others' consumption: N-1 instances each
 *   reading their share would be N-1 times the observer's work, which 2 cores cannot host (that
 *   work is the observer's, measured once). And they serve only the accounts the observer owns (one
 *   of its two owners): the observer takes in exactly what it would of a whole fleet, while the
 *   peers' work is 2/N of it; the reports they send the accounts' other owners go to subjects
 *   nobody reads.
 *
 * Once a heartbeat interval (a second, N/H s past H instances, so that probes into the observer
 * stay at most H a second as heartbeats do) each peer's broadcast carries a probe entry whose account id holds the time it was
 * taken, so the observer measures the lag from a peer's sync to the moment its actors took the
 * entry (the probes' messages are counted apart from the reports). The simulated accounts are cold
 * (far under their limits): their entries go to their two owners only, every coldReportMs
 * (src/fleet/fleet.ts), and the observer counts what it takes in as an owner.
 *
 * Run as its own process: `node --import tsx bench/scenarios/fleet-sim-instances.ts '<json>'`; prints
 * `{"ready":true}` once every bus is connected, then answers `mark` and `report` on stdin.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { createInterface } from 'node:readline'
import { FleetBus, type FleetChannel, type FleetSubjects } from '../../src/fleet/fleet-bus.js'
import { Fleet, type FleetKeys } from '../../src/fleet/fleet.js'
import { AccountActor, takeConsumedOf, type Consumption } from '../../actors/account/account-actor.js'
import { initialRateState } from '../../actors/account/decide.js'
import { systemClock } from '../../actors/runtime/clock.js'
import { OwnerPicker } from '../../actors/fleet/owner-picker.js'
import { heartbeatIntervalMs } from '../../actors/fleet/heartbeat-interval.js'

export interface FleetSimInstancesOptions {
  nats: string
  /** The fleet's subjects (one per run, so that runs never hear each other). */
  subjectRoot: string
  role: 'observer' | 'peers'
  /** Instance ids first … first+count-1 (the observer is 0). */
  first: number
  count: number
  /** Instances in the fleet (for the share of an account's calls each one gets). */
  fleetSize: number
  /** Active accounts across the fleet. */
  accounts: number
  syncMs: number
  /** fleet.coldReportMs (C), and the heartbeat and silence (scaled with time, as syncMs is). */
  coldReportMs: number
  /** fleet.maxReportsPerSecond (M), divided by the time scale as every rate is. */
  maxReportsPerSecond: number
  heartbeatMs: number
  silentMs: number
  /** fleet.maxHeartbeatsPerSecond (H), divided by the time scale as every rate is. */
  maxHeartbeatsPerSecond: number
  /**
   * `spread`: each account makes `rate` calls a second, spread by the load balancer over the
   * instances, so an instance sees an account in an interval with probability 1 - e^(-rate·syncMs/N).
   * `all`: every account calls every instance in every interval (the worst case: an account busier
   * than N calls per syncMs, or a fleet sized so that it is).
   */
  workload: 'spread' | 'all'
  rate: number
}

const opts = JSON.parse(process.argv[2] ?? '{}') as FleetSimInstancesOptions
const OBSERVER = 'sim-000'
const idOf = (i: number): string => `sim-${String(i).padStart(3, '0')}`
const now = (): number => performance.timeOrigin + performance.now()

/** Account ids shaped as the gateway's (`acc_` + 16 hex: 20 characters), so messages have their real size. */
const ACCOUNT_IDS = Array.from({ length: opts.accounts }, (_, i) => `acc_${i.toString(16).padStart(16, '0')}`)
const PROBE = '~'
/** How often each peer sends a probe: as often as it beats, so that what the probes add stays bounded as heartbeats do. */
const PROBE_EVERY_MS = heartbeatIntervalMs({ heartbeatMs: opts.heartbeatMs, instances: opts.fleetSize, maxHeartbeatsPerSecond: opts.maxHeartbeatsPerSecond })

/**
 * The accounts the observer owns (one of two), with the whole fleet's membership: all the peers
 * serve. One OwnerPicker for the fleet: ownersOf hashed and sorted all N members for each account,
 * which for 100,000 accounts × 300 instances kept a peers' process from starting within 30 s.
 */
const FLEET_PICKER = new OwnerPicker(Array.from({ length: opts.fleetSize }, (_, i) => idOf(i)))
const OBSERVED = opts.role === 'peers' ? ACCOUNT_IDS.map((_, i) => i).filter((i) => FLEET_PICKER.owns(ACCOUNT_IDS[i]!, OBSERVER)) : []
const ALL = ACCOUNT_IDS.map((_, i) => i)

/**
 * The accounts of `among` that called one instance in one interval: each with probability
 * 1 − e^(−rate·syncMs/N), drawn by geometric gaps so that the cost follows the accounts drawn, not
 * all of them (100,000 accounts × 300 instances × 20 syncs a second would be the peers' whole CPU).
 */
function accountsThisInterval(among: readonly number[]): number[] {
  if (opts.workload === 'all') return among.slice()
  const p = 1 - Math.exp(-(opts.rate * opts.syncMs) / 1000 / opts.fleetSize)
  const out: number[] = []
  const logQ = Math.log(1 - p)
  for (let k = Math.floor(Math.log(1 - Math.random()) / logQ); k < among.length; k += 1 + Math.floor(Math.log(1 - Math.random()) / logQ)) out.push(among[k]!)
  return out
}

const nothing = (): Consumption => ({ full: 0, archive: 0, messages: 0, connects: 0, cooldownUntil: 0, penaltyUntil: 0, fullUnits: 0, archiveUnits: 0 })

/** A peer's keys: the consumption of the accounts that called it this interval, and the probe. */
class SimulatedKeys implements FleetKeys {
  /** Entries handed to the fleet by every peer of this process (the probes left out). */
  static entriesOut = 0
  #syncs: number
  constructor(phase: number) {
    this.#syncs = phase
  }
  takeConsumed(): { accountId: string; consumed: Consumption; open: number }[] {
    const out = accountsThisInterval(OBSERVED).map((i) => ({ accountId: ACCOUNT_IDS[i]!, consumed: { ...nothing(), full: 1 }, open: 0 }))
    SimulatedKeys.entriesOut += out.length
    // A cooldown (long past) sends the probe to every instance, as a cold account's entry would not be: once a heartbeat.
    if (this.#syncs++ % Math.max(1, Math.round(PROBE_EVERY_MS / opts.syncMs)) === 0)
      out.push({ accountId: `${PROBE}${now().toFixed(3)}`, consumed: { ...nothing(), full: 1, cooldownUntil: 1 }, open: 0 })
    return out
  }
  openConnections(): { accountId: string; open: number }[] {
    return []
  }
  consumedElsewhere(): void {}
  setShare(): void {}
}

/** The observer's keys: one real AccountActor per account (as src/gateway/key-directory.ts holds them). */
class ActorKeys implements FleetKeys {
  readonly actors = new Map<string, AccountActor>()
  #consumers = new Map<AccountActor, string>()
  entriesIn = 0
  lagsMs: number[] = []
  /** CPU spent admitting this instance's own calls (µs): what a fleet of one spends too, left out of the sharing's cost. */
  serveCpuUs = 0

  constructor() {
    for (const accountId of ACCOUNT_IDS) {
      // Limits above what the simulation calls: what is measured is the sharing, not refusals (an
      // actor that refuses admits nothing, and its instance would then have nothing to publish).
      const state = initialRateState({ keyId: `key_${accountId}`, accountId, limits: { full: 1_000_000, archive: 1_000_000 } }, systemClock.now())
      this.actors.set(accountId, new AccountActor(state, systemClock, (a) => this.#consumers.set(a, accountId)))
    }
  }

  /** This instance's own calls of one interval, through the actors' admission. */
  serve(): void {
    const before = process.cpuUsage()
    for (const i of accountsThisInterval(ALL)) this.actors.get(ACCOUNT_IDS[i]!)!.charge('full', { calls: 1 })
    const spent = process.cpuUsage(before)
    this.serveCpuUs += spent.user + spent.system
  }

  takeConsumed(): { accountId: string; consumed: Consumption; open: number }[] {
    const out = takeConsumedOf(this.#consumers)
    this.#consumers = new Map()
    return out
  }
  openConnections(): { accountId: string; open: number }[] {
    return []
  }
  consumedElsewhere(accountId: string, consumed: Consumption): void {
    if (accountId.startsWith(PROBE)) return void this.lagsMs.push(now() - Number(accountId.slice(1)))
    this.entriesIn++
    this.actors.get(accountId)?.consumedElsewhere(consumed)
  }
  setShare(): void {}
}

/** The bus with its limits messages counted (and, for peers, the others' limits not subscribed). */
class CountedChannel implements FleetChannel {
  readonly #bus: FleetBus
  readonly #readLimits: boolean
  static readonly counts = { msgsIn: 0, reportsIn: 0, bytesIn: 0, msgsOut: 0, bytesOut: 0, heartbeatsIn: 0 }

  constructor(bus: FleetBus, readLimits: boolean) {
    this.#bus = bus
    this.#readLimits = readLimits
  }
  get subjects(): FleetSubjects {
    return this.#bus.subjects
  }
  get connected(): boolean {
    return this.#bus.connected
  }
  /** The subjects of the limits (the broadcast, the hot marks, the reports to owners), not the heartbeats. */
  #isLimits(subject: string): boolean {
    return subject !== this.subjects.members
  }
  publish(subject: string, data: Uint8Array): void {
    if (this.#isLimits(subject)) {
      CountedChannel.counts.msgsOut++
      CountedChannel.counts.bytesOut += data.length
    }
    this.#bus.publish(subject, data)
  }
  subscribe(subject: string, onMessage: (data: Uint8Array) => void): void {
    if (!this.#isLimits(subject))
      return this.#bus.subscribe(subject, (data) => {
        CountedChannel.counts.heartbeatsIn++
        onMessage(data)
      })
    if (!this.#readLimits) return
    const report = subject.startsWith(`${this.subjects.owners}.`)
    this.#bus.subscribe(subject, (data) => {
      CountedChannel.counts.msgsIn++
      if (report) CountedChannel.counts.reportsIn++
      CountedChannel.counts.bytesIn += data.length
      onMessage(data)
    })
  }
  close(): Promise<void> {
    return this.#bus.close()
  }
}

const observer = opts.role === 'observer'
const keys = observer ? new ActorKeys() : undefined
const instances: { fleet: Fleet; bus: FleetBus }[] = []
for (let i = opts.first; i < opts.first + opts.count; i++) {
  let fleet: Fleet | undefined
  const bus = FleetBus.open(opts.nats, opts.subjectRoot, (connected) => fleet?.connectionChanged(connected), `fleet-sim-${i}`)
  fleet = new Fleet({
    bus: new CountedChannel(bus, observer),
    keys: keys ?? new SimulatedKeys(i),
    self: { id: idOf(i), address: `10.0.${i >> 8}.${i & 255}:8080`, startedAt: Date.now(), version: 'sim' },
    clock: systemClock,
    syncMs: opts.syncMs,
    coldReportMs: opts.coldReportMs,
    maxReportsPerSecond: opts.maxReportsPerSecond,
    heartbeatMs: opts.heartbeatMs,
    silentMs: opts.silentMs,
    maxHeartbeatsPerSecond: opts.maxHeartbeatsPerSecond,
  })
  instances.push({ fleet, bus })
}
while (!instances.every((x) => x.bus.connected)) await new Promise((r) => setTimeout(r, 20))
// Started once connected: a first sync before the subscriptions are made would be lost.
for (const { fleet } of instances) fleet.start()
// The observer's own calls, one interval's worth every syncMs (its Fleet publishes them).
const serving = keys && setInterval(() => keys.serve(), opts.syncMs)

// Sampled every 20 ms, not every 1: a timer firing every millisecond in each process was part of
// the floor the observer spends doing almost nothing (docs/fleet.md), and what the delay is read
// for, stalls of tens of milliseconds that hold heartbeats and reports back, still shows at 20.
// The histogram holds the time between two samples, the interval included: the delay is what is past it.
const ELD_RESOLUTION_MS = 20
const eld = monitorEventLoopDelay({ resolution: ELD_RESOLUTION_MS })
eld.enable()
let mark = { at: performance.now(), cpu: process.cpuUsage() }
let entriesInAtMark = 0
const lines = createInterface({ input: process.stdin })
lines.on('line', (line) => {
  const command = line.trim()
  if (command === 'beat') {
    // Once every process is up: heartbeats scaled with time come seconds apart, and the instances
    // of processes started later missed the first ones (owners are chosen among the members heard).
    for (const { fleet } of instances) fleet.heartbeat()
    process.stdout.write(JSON.stringify({ beaten: true }) + '\n')
  } else if (command === 'mark') {
    Object.assign(CountedChannel.counts, { msgsIn: 0, reportsIn: 0, bytesIn: 0, msgsOut: 0, bytesOut: 0, heartbeatsIn: 0 })
    SimulatedKeys.entriesOut = 0
    if (keys) {
      keys.entriesIn = 0
      keys.lagsMs = []
      keys.serveCpuUs = 0
    }
    eld.reset()
    entriesInAtMark = instances[0]?.fleet.traffic().entriesIn ?? 0
    mark = { at: performance.now(), cpu: process.cpuUsage() }
    process.stdout.write(JSON.stringify({ marked: true }) + '\n')
  } else if (command === 'report') {
    const s = (performance.now() - mark.at) / 1000
    const cpu = process.cpuUsage(mark.cpu)
    const c = CountedChannel.counts
    const lags = (keys?.lagsMs ?? []).sort((a, b) => a - b)
    const pct = (p: number): number => Math.round((lags[Math.min(lags.length - 1, Math.floor((p / 100) * lags.length))] ?? Number.NaN) * 10) / 10
    process.stdout.write(
      JSON.stringify({
        seconds: Math.round(s * 10) / 10,
        cpuPct: Math.round(((cpu.user + cpu.system) / 1e6 / s) * 1000) / 10,
        // The same without the admission of its own calls: what sharing the limits costs it.
        sharingCpuPct: Math.round(((cpu.user + cpu.system - (keys?.serveCpuUs ?? 0)) / 1e6 / s) * 1000) / 10,
        serveCpuPct: Math.round(((keys?.serveCpuUs ?? 0) / 1e6 / s) * 1000) / 10,
        msgsInPerS: Math.round(c.msgsIn / s),
        reportsInPerS: Math.round(c.reportsIn / s),
        bytesInPerS: Math.round(c.bytesIn / s),
        msgsOutPerS: Math.round(c.msgsOut / s),
        // Heartbeats heard per instance of this process (its own echo included): N per interval.
        heartbeatsInPerS: Math.round((c.heartbeatsIn / instances.length / s) * 10) / 10,
        heartbeatEveryMs: instances[0]?.fleet.heartbeatEveryMs ?? 0,
        bytesOutPerS: Math.round(c.bytesOut / s),
        // Entries taken in: applied to the actors (hot accounts, probes) and reported to it as an owner.
        entriesInPerS: Math.round(((instances[0]?.fleet.traffic().entriesIn ?? 0) - entriesInAtMark) / s),
        entriesOutPerS: Math.round(SimulatedKeys.entriesOut / s),
        probes: lags.length,
        lagP50Ms: pct(50),
        lagP99Ms: pct(99),
        lagMaxMs: Math.round((lags[lags.length - 1] ?? Number.NaN) * 10) / 10,
        eldP99Ms: Math.round(Math.max(0, eld.percentile(99) / 1e6 - ELD_RESOLUTION_MS) * 10) / 10,
        members: instances[0]?.fleet.members().length ?? 0,
        rssMiB: Math.round(process.memoryUsage().rss / 1048576),
      }) + '\n',
    )
  }
})
process.stdout.write(JSON.stringify({ ready: true, instances: instances.length }) + '\n')

process.once('SIGTERM', async () => {
  if (serving) clearInterval(serving)
  for (const { fleet } of instances) fleet.stop()
  await Promise.all(instances.map((x) => x.bus.close()))
  process.exit(0)
})
