import { AccountActor, takeConsumedOf, type Consumption } from '../../actors/account/account-actor.js'
import { initialRateState, type KeyLimits } from '../../actors/account/decide.js'
import type { RateLimits } from '../../actors/fleet/hot-accounts.js'
import { Fleet, type FleetKeys, type FleetTraffic } from '../../src/fleet/fleet.js'
import { FakeClock } from './fake-clock.js'
import { MemoryFleetHub, type MemoryFleetChannel } from './memory-fleet-bus.js'

/** An instance's key actors as src/gateway/key-directory.ts holds them for the fleet: one real AccountActor per account. */
export class ActorKeys implements FleetKeys {
  readonly #actors = new Map<string, AccountActor>()
  #consumers = new Map<AccountActor, string>()
  /** Entries of other instances applied to this instance's buckets. */
  applied = 0

  constructor(
    private readonly clock: FakeClock,
    private readonly limits: KeyLimits,
  ) {}

  actor(accountId: string): AccountActor {
    let actor = this.#actors.get(accountId)
    if (actor === undefined) {
      const state = initialRateState({ keyId: `key_${accountId}`, accountId, limits: this.limits }, this.clock.now())
      actor = new AccountActor(state, this.clock, (a) => this.#consumers.set(a, accountId))
      this.#actors.set(accountId, actor)
    }
    return actor
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
    this.applied++
    this.actor(accountId).consumedElsewhere(consumed)
  }
  setShare(): void {}
  limitsOf(): RateLimits {
    return { full: this.limits.full, archive: this.limits.archive, fullUnits: null, archiveUnits: null, messages: this.limits.full, connects: 15 }
  }
}

export interface SimInstance {
  id: string
  fleet: Fleet
  keys: ActorKeys
  bus: MemoryFleetChannel
  /** Stepped by the driver: false once it left or was killed. */
  running: boolean
  /** Its timers' phase: instances do not sync at the same moments. */
  phase: number
}

export interface ActorFleetOptions {
  instances: number
  limits: KeyLimits
  syncMs?: number
  /** fleet.coldReportMs (absent: every sync, as before it was a setting). */
  coldReportMs?: number
  /** fleet.maxReportsPerSecond (absent: its default, which a fleet of a few never reaches). */
  maxReportsPerSecond?: number
  heartbeatMs?: number
  silentMs?: number
  /** fleet.maxHeartbeatsPerSecond (absent: its default, which a fleet of a few never reaches). */
  maxHeartbeatsPerSecond?: number
  /** The driver's step; messages published in a step arrive at its end (the delivery lag, at most this). */
  tickMs?: number
}

/**
 * Fleet instances in one process, each with real AccountActors, on a MemoryFleetHub under a
 * FakeClock that only `run` moves: every tick the workload makes its calls, each instance syncs
 * and beats on its own timers' phase, then what was published arrives. So the delivery lag is at
 * most one tick and a test can count every call admitted, when, and by whom.
 * @example
 * const fleet = new ActorFleet({ instances: 5, limits: { full: 60, archive: 0 } })
 * fleet.run(5_000, (now) => fleet.call(0, 'acc_1'))
 * fleet.windows('acc_1').max // the most admitted in any one second
 */
export class ActorFleet {
  readonly clock = new FakeClock(1_000_000)
  readonly hub = new MemoryFleetHub({ held: true })
  readonly instances: SimInstance[] = []
  readonly syncMs: number
  readonly coldReportMs: number
  readonly maxReportsPerSecond: number | undefined
  readonly heartbeatMs: number
  readonly silentMs: number
  readonly maxHeartbeatsPerSecond: number | undefined
  readonly tickMs: number
  readonly #limits: KeyLimits
  /** Per account, the times of its admitted calls, across the fleet. */
  readonly #admitted = new Map<string, number[]>()
  readonly #started: number

  constructor(opts: ActorFleetOptions) {
    this.syncMs = opts.syncMs ?? 50
    this.coldReportMs = opts.coldReportMs ?? this.syncMs
    this.maxReportsPerSecond = opts.maxReportsPerSecond
    this.heartbeatMs = opts.heartbeatMs ?? 1_000
    this.silentMs = opts.silentMs ?? 3_000
    this.maxHeartbeatsPerSecond = opts.maxHeartbeatsPerSecond
    this.tickMs = opts.tickMs ?? 5
    this.#limits = opts.limits
    this.#started = this.clock.now()
    for (let i = 0; i < opts.instances; i++) this.add()
    // Everyone's first heartbeat: a fleet of n.
    this.hub.deliver()
  }

  /** A new instance joins (its first heartbeat arrives at the end of the tick). */
  add(id = `i${this.instances.length}`): SimInstance {
    const bus = this.hub.channel()
    const keys = new ActorKeys(this.clock, this.#limits)
    const fleet = new Fleet({
      bus,
      keys,
      self: { id, address: id, startedAt: 0, version: 't' },
      clock: this.clock,
      syncMs: this.syncMs,
      coldReportMs: this.coldReportMs,
      maxReportsPerSecond: this.maxReportsPerSecond,
      heartbeatMs: this.heartbeatMs,
      silentMs: this.silentMs,
      maxHeartbeatsPerSecond: this.maxHeartbeatsPerSecond,
    })
    const x: SimInstance = { id, fleet, keys, bus, running: true, phase: (this.instances.length * 7) % this.syncMs }
    this.instances.push(x)
    fleet.start({ timers: false })
    return x
  }

  /** Stops gracefully: says it leaves. */
  leave(i: number): void {
    this.instances[i]!.fleet.stop()
    this.instances[i]!.running = false
  }

  /** Killed: silent from now on, it says nothing and hears nothing. */
  kill(i: number): void {
    this.instances[i]!.bus.stalled = true
    this.instances[i]!.running = false
  }

  /** A call of `accountId` reaching instance `i`: whether it was admitted. */
  call(i: number, accountId: string, calls = 1): boolean {
    const x = this.instances[i]!
    if (!x.running) return false
    const admitted = x.keys.actor(accountId).charge('full', { calls }).type === 'Admitted'
    if (admitted) {
      let list = this.#admitted.get(accountId)
      if (list === undefined) this.#admitted.set(accountId, (list = []))
      for (let k = 0; k < calls; k++) list.push(this.clock.now())
    }
    return admitted
  }

  /** `ms` of time, a tick at a time: the workload's calls (`now` from the start of the fleet), then each instance's timers, then delivery. */
  run(ms: number, workload: (now: number) => void = () => {}): void {
    const end = this.clock.now() + ms
    while (this.clock.now() < end) {
      const now = this.clock.now() - this.#started
      workload(now)
      for (const x of this.instances) {
        if (!x.running) continue
        const t = now + x.phase
        if (t % this.syncMs < this.tickMs) x.fleet.sync()
        // As its timer does: every heartbeatMs, or as often as its last heartbeat said in a large fleet.
        if (t % x.fleet.heartbeatEveryMs < this.tickMs) x.fleet.heartbeat()
      }
      this.hub.deliver()
      this.clock.advance(this.tickMs)
    }
  }

  /** Time since the fleet started. */
  get now(): number {
    return this.clock.now() - this.#started
  }

  /** Calls of `accountId` admitted by the whole fleet in [from, to) (from the fleet's start). */
  admitted(accountId: string, from = 0, to = Number.POSITIVE_INFINITY): number {
    let n = 0
    for (const at of this.#admitted.get(accountId) ?? []) if (at - this.#started >= from && at - this.#started < to) n++
    return n
  }

  /**
   * The calls admitted in every one-second window [t, t + 1 s) with t from `from` to `to` - 1 s,
   * a tick apart: the most and the fewest, and where the most was.
   */
  windows(accountId: string, from: number, to: number): { max: number; maxAt: number; min: number; minAt: number } {
    const times = (this.#admitted.get(accountId) ?? []).map((at) => at - this.#started).sort((a, b) => a - b)
    let max = 0
    let maxAt = from
    let min = Number.POSITIVE_INFINITY
    let minAt = from
    let lo = 0
    let hi = 0
    for (let t = from; t + 1_000 <= to; t += this.tickMs) {
      while (lo < times.length && times[lo]! < t) lo++
      while (hi < times.length && times[hi]! < t + 1_000) hi++
      const n = hi - lo
      if (n > max) [max, maxAt] = [n, t]
      if (n < min) [min, minAt] = [n, t]
    }
    return { max, maxAt, min, minAt }
  }

  traffic(i: number): FleetTraffic {
    return this.instances[i]!.fleet.traffic()
  }
}
