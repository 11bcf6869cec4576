import { pack, unpack } from 'msgpackr'
import type { Clock } from '../../actors/runtime/clock.js'
import { shareWhenCutOff } from '../../actors/fleet/shares.js'
import { OwnedAccounts, type RateLimits } from '../../actors/fleet/hot-accounts.js'
import { coldIntervalMs } from '../../actors/fleet/cold-interval.js'
import { heartbeatIntervalMs, silenceMs } from '../../actors/fleet/heartbeat-interval.js'
import { OwnerPicker } from '../../actors/fleet/owner-picker.js'
import type { Consumption } from '../../actors/account/account-actor.js'
import { ColdReports } from './cold-reports.js'
import { ConnectionShares } from './connection-shares.js'
import type { FleetChannel } from './fleet-bus.js'
import { HotMarks } from './hot-marks.js'
import { consumes, consumptionOf, entryOf, openEntry, subjectToken, usageOf, type Entry, type HotMessage, type LimitsMessage } from './limit-entries.js'
import { Membership, type Member } from './membership.js'

/** What the fleet needs of the key actors (src/gateway/key-directory.ts). */
export interface FleetKeys {
  takeConsumed(): { accountId: string; consumed: Consumption; open: number }[]
  openConnections(): { accountId: string; open: number }[]
  consumedElsewhere(accountId: string, consumed: Consumption): void
  setShare(share: number): void
  /** An account's whole limits per second, for the accounts this instance owns (absent: none judged by rate). */
  limitsOf?(accountId: string): RateLimits | undefined
}

export interface FleetOptions {
  bus: FleetChannel
  keys: FleetKeys
  self: Omit<Member, 'share'>
  clock: Clock
  /** How often what this instance admitted is sent to the others (the limits' lag). */
  syncMs: number
  /**
   * How often what it admitted of cold accounts goes to their owners (C; rounded to whole syncs;
   * absent: every sync). The owners judge heat up to this late: see ColdReports.
   */
  coldReportMs?: number
  /**
   * At most this many cold reports a second into an owner (M; absent: MAX_REPORTS_PER_SECOND):
   * with N instances the reports go every max(coldReportMs, (N − 1)/M s) (actors/fleet/cold-interval.ts).
   */
  maxReportsPerSecond?: number
  /** How often it announces itself; silent for `silentMs`, an instance is dropped. */
  heartbeatMs: number
  silentMs: number
  /**
   * At most this many heartbeats a second into an instance (H; absent: MAX_HEARTBEATS_PER_SECOND):
   * with N instances each announces itself every max(heartbeatMs, N/H s), and silentMs and the
   * settling after a rejoin stretch by as much (actors/fleet/heartbeat-interval.ts).
   */
  maxHeartbeatsPerSecond?: number
  onMembership?: (event: 'joined' | 'left', id: string, live: number) => void
  onShare?: (share: number) => void
}

/** What an instance received and sent of the limits (not heartbeats), since it started. */
export interface FleetTraffic {
  messagesIn: number
  entriesIn: number
  messagesOut: number
  entriesOut: number
}

/**
 * At most this many accounts in one limits message. NATS refuses a message over the server's
 * max_payload (1 MiB by default) and the bus drops what it cannot send: at about 29 bytes an entry
 * (65 at most, with a cooldown and a penalty), an instance that served some 36,000 accounts in one
 * interval stopped sharing any of them, silently. 4,096 entries are at most 266 KB, and one message
 * holds the receiving event loop for about 10 ms, not the 100 ms of 36,000 (bench/fleet-sim.ts).
 */
export const MAX_ENTRIES_PER_MESSAGE = 4_096

/**
 * This instance as one of a fleet: it announces itself, hears the others, and shares what it
 * admits for each key so that a key's limits hold across instances.
 *
 * Decisions stay local and in memory; the hot path never waits on the network. Each account has
 * two owners among the live instances (rendezvous hashing, actors/fleet/owners.ts, looked up
 * through an OwnerPicker built once per membership). Every
 * `coldReportMs` (stretched to (N − 1)/`maxReportsPerSecond` in a large fleet: cold-interval.ts) an
 * instance sends what it admitted and refused per *cold* account since its last
 * report to that account's owners only, one message per owner (ColdReports), and decides cold
 * accounts from its own buckets, at the whole plan. An
 * owner sums the last second of what every instance reported and marks the account *hot* past
 * half of a limit, on a refusal, or on a WebSocket cooldown or penalty (actors/fleet/hot-accounts.ts);
 * the mark goes to everyone. A hot account is shared as every account once was: every instance
 * that serves it publishes what it admitted on the broadcast subject and takes what the others
 * admitted from its own copy of the key's buckets, the first time with what it admitted over the
 * last second while the account was cold. So an instance reads what it serves, what it owns, and
 * the hot accounts: not the whole fleet's calls. The bound this keeps is derived in docs/fleet.md
 * ("The overshoot bound").
 *
 * Open connections are counts, not rates, and few: every instance still hears every open count
 * (on heartbeats and when one changes) for its connection allowance.
 *
 * Cut off from NATS, an instance applies 1/N of each limit (N: the fleet it last saw) until it is
 * back and has heard the others again; its buckets keep their level, so coming back is no burst.
 */
export class Fleet {
  readonly #opts: FleetOptions
  readonly #membership: Membership
  readonly #connections = new ConnectionShares()
  /** The accounts this instance owns: the last second the others reported of them, and which are hot. */
  readonly #owned: OwnedAccounts
  readonly #hot = new HotMarks()
  /** Cold accounts' consumption not yet reported to their owners. */
  readonly #cold: ColdReports
  /** Each account's owners in the membership as it is now (cleared when it changes). */
  readonly #owners = new Map<string, string[]>()
  /** The live owning members, as owners are chosen among them (built again when the membership changes). */
  #picker: OwnerPicker | undefined
  readonly #traffic: FleetTraffic = { messagesIn: 0, entriesIn: 0, messagesOut: 0, entriesOut: 0 }
  #timers: NodeJS.Timeout[] = []
  /** The next heartbeat's timer: set after each heartbeat, at the interval that heartbeat announced. */
  #beatTimer: NodeJS.Timeout | undefined
  /** How often this instance announced it beats, at its last heartbeat (its next one comes within this). */
  #everyMs: number
  /** Whether heartbeat() sets the timer of the next one (start without `timers: false`, until stop). */
  #beats = false
  #share = 1
  /** Until then, a rejoined instance keeps its cut-off share: it has not heard everyone yet. */
  #settlingUntil = 0
  /** When this instance last heard its own heartbeat back: NATS still carries its messages. */
  #selfHeardAt: number
  /** Whether it reaches the fleet (connected, and hears itself). */
  #reachable = true
  /** It left (stop): it says so once. */
  #stopped = false

  constructor(opts: FleetOptions) {
    this.#opts = opts
    this.#membership = new Membership({ ...opts.self, share: 1, owns: true }, opts.clock, opts)
    this.#everyMs = opts.heartbeatMs
    this.#selfHeardAt = opts.clock.now()
    this.#owned = new OwnedAccounts((accountId) => opts.keys.limitsOf?.(accountId))
    this.#cold = new ColdReports(opts.syncMs, this.#coldIntervalMs())
  }

  /** Join: subscribe, announce this instance, and run the timers (`timers: false`: a test drives sync and heartbeat by hand). */
  start(opts: { timers?: boolean } = {}): void {
    const { bus } = this.#opts
    bus.subscribe(bus.subjects.members, (data) => this.#heard(unpack(data) as Member))
    bus.subscribe(bus.subjects.limits, (data) => this.#received(unpack(data) as LimitsMessage))
    bus.subscribe(`${bus.subjects.owners}.${subjectToken(this.#opts.self.id)}`, (data) => this.#reported(unpack(data) as LimitsMessage))
    bus.subscribe(bus.subjects.hot, (data) => this.#marked(unpack(data) as HotMessage))
    if (opts.timers !== false) {
      this.#timers = [setInterval(() => this.sync(), this.#opts.syncMs)]
      for (const t of this.#timers) t.unref()
    }
    this.#beats = opts.timers !== false
    this.heartbeat()
  }

  /**
   * Leave: what was admitted goes out a last time and the others are told, so that they choose
   * the owners of this instance's accounts among themselves now, not after `silentMs` of reports
   * sent to an owner that no longer reads them.
   */
  stop(): void {
    for (const t of this.#timers) clearInterval(t)
    this.#timers = []
    this.#beats = false
    clearTimeout(this.#beatTimer)
    if (this.#stopped) return
    this.#stopped = true
    this.sync({ report: true })
    const { bus } = this.#opts
    bus.publish(bus.subjects.members, pack({ ...this.#membership.self, share: this.#share, leaving: true } satisfies Member))
  }

  /** The live instances, this one included, sorted by id. */
  members(): Member[] {
    const self = this.#membership.self.id
    return this.#membership.live().map((m) => (m.id === self ? { ...m, share: this.#share } : m))
  }

  /** The part of each key's limit this instance applies now. */
  get share(): number {
    return this.#share
  }

  /** Accounts this instance owns and heard of in the last second (or keeps hot). */
  get ownedAccounts(): number {
    return this.#owned.size
  }

  /** Accounts hot now, as this instance was told (it shares those with every instance). */
  hotAccounts(): number {
    return this.#hot.count(this.#opts.clock.now())
  }

  /** Whether the account is hot here now. */
  isHot(accountId: string): boolean {
    return this.#hot.isHot(accountId, this.#opts.clock.now())
  }

  /** The account's owners as this instance sees the fleet now. */
  ownersOf(accountId: string): string[] {
    let owners = this.#owners.get(accountId)
    if (owners === undefined) {
      // Bounded by the accounts seen between two membership changes; a long-lived fleet with
      // millions of accounts starts over rather than keep them all.
      if (this.#owners.size >= 200_000) this.#owners.clear()
      owners = this.#ownerPicker().ownersOf(accountId)
      this.#owners.set(accountId, owners)
    }
    return owners
  }

  /**
   * How often this instance announces itself now, as its last heartbeat said (max(heartbeatMs, N/H s)):
   * its next heartbeat comes within this (a driver of `timers: false` calls heartbeat() as often).
   */
  get heartbeatEveryMs(): number {
    return this.#everyMs
  }

  /** How often cold reports go to their owners now: C_eff in whole syncs (see ColdReports). */
  get coldReportMs(): number {
    return this.#cold.intervalMs
  }

  /** What this instance received and sent of the limits since it started. */
  traffic(): FleetTraffic {
    return { ...this.#traffic }
  }

  /** How many of the account's connections (the key's limit `max`) this instance may hold now. */
  allowance(accountId: string, max: number): number {
    if (this.#share < 1) return Math.max(1, Math.floor(max * this.#share))
    const membership = this.#membership
    const self = membership.self.id
    const view = {
      peers: () =>
        membership
          .live()
          .filter((m) => m.id !== self)
          .map((m) => m.id),
      lastHeard: (id: string) => membership.lastHeard(id),
      rank: () => membership.rank(),
    }
    return this.#connections.allowance(accountId, max, view, this.#opts.clock.now())
  }

  /** The bus went away (at once) or came back (it counts once this instance hears itself again). */
  connectionChanged(connected: boolean): void {
    if (!connected) this.#cutOff()
  }

  /**
   * Whether this instance reaches the fleet is told by its own heartbeat coming back, not only by
   * the client's connection state: a link that drops packets without a reset looks connected to
   * the client for minutes, while the others' heartbeats stop; an instance that then dropped them
   * as silent would take every key's whole limit. Not hearing itself, it takes its cut-off share
   * and keeps the fleet it last saw; hearing itself again, it waits a heartbeat and a half to hear
   * the others before taking the whole, shared limit back.
   *
   * In a large fleet heartbeats go every max(heartbeatMs, N/H s) (actors/fleet/heartbeat-interval.ts),
   * N as it is now: each says how often it beats (`every`), and the silence after which the others
   * drop it, its own silence, and the settling stretch as much. The interval changes at a
   * heartbeat, never between two: the next one comes within what the last one announced.
   */
  heartbeat(): void {
    const { bus, clock } = this.#opts
    const now = clock.now()
    // Judged by the interval the last heartbeat announced: this one came within it.
    const silent = silenceMs(this.#opts, this.#everyMs)
    const reachable = bus.connected && now - this.#selfHeardAt <= silent
    if (!reachable) this.#cutOff()
    else {
      if (!this.#reachable) {
        this.#reachable = true
        this.#settlingUntil = now + this.#heartbeatIntervalMs() * 1.5
        this.#membership.restartSilence()
      }
      if (this.#share < 1 && now >= this.#settlingUntil) this.#setShare(1)
      for (const id of this.#membership.prune(this.#selfHeardAt, this.#everyMs)) this.#left(id)
      if (this.#share === 1) this.#membership.noteSeen()
    }
    this.#everyMs = this.#heartbeatIntervalMs()
    bus.publish(
      bus.subjects.members,
      pack({ ...this.#membership.self, share: this.#share, owned: this.#owned.size, hot: this.hotAccounts(), every: this.#everyMs } satisfies Member),
    )
    if (this.#beats) {
      clearTimeout(this.#beatTimer)
      this.#beatTimer = setTimeout(() => this.heartbeat(), this.#everyMs)
      this.#beatTimer.unref()
    }
    // Every open count again, for instances that joined since it last changed.
    this.#publish(this.#opts.keys.openConnections().map(({ accountId, open }) => openEntry(accountId, open)))
    this.#sweep(now)
  }

  /**
   * Send what this instance admitted since the last call (its timer calls it every syncMs): hot
   * accounts (and cooldowns and penalties) to everyone at once, cold ones to their owners every
   * `coldReportMs` (or now, with `report`); then, as an owner, mark what turned hot and renew the
   * marks of what still is.
   */
  sync(opts: { report?: boolean } = {}): void {
    const now = this.#opts.clock.now()
    const self = this.#opts.self.id
    const consumed = this.#opts.keys.takeConsumed()
    const report = this.#cold.due() || opts.report === true
    // Alone, everything goes to everyone as it always did: an instance about to join hears it all.
    const shared = this.#ownerPicker().size > 1
    const broadcast: Entry[] = []
    const toOwners = new Map<string, Entry[]>()
    const touched: string[] = []
    const toOwnersOf = (accountId: string, entry: Entry): void => {
      for (const owner of this.ownersOf(accountId)) {
        if (owner === self) continue
        let list = toOwners.get(owner)
        if (list === undefined) toOwners.set(owner, (list = []))
        list.push(entry)
      }
    }
    for (const { accountId, consumed: c, open } of consumed) {
      const entry = entryOf(accountId, c, open)
      const hot = this.#hot.isHot(accountId, now)
      if (!shared || hot || c.cooldownUntil > 0 || c.penaltyUntil > 0) {
        if (this.#hot.takeOwed(accountId)) this.#hot.pushCatchUp(broadcast, accountId, this.#connections.published(accountId), now)
        broadcast.push(entry)
        // What was held for its owners while it was cold goes to them now: they read only the
        // broadcast's news from here on, and the catch-up (above) is the others', not theirs.
        const held = this.#cold.take(accountId)
        if (held !== undefined) toOwnersOf(accountId, entryOf(accountId, held.c, held.open))
        if (shared && this.ownersOf(accountId).includes(self)) {
          this.#owned.add(accountId, self, usageOf(c), now)
          if (c.cooldownUntil > 0 || c.penaltyUntil > 0) this.#owned.block(accountId, Math.max(c.cooldownUntil, c.penaltyUntil))
          touched.push(accountId)
        }
        continue
      }
      // Open counts are every instance's news (the connection allowance), whatever the account's heat.
      if (open !== this.#connections.published(accountId)) broadcast.push(openEntry(accountId, open))
      this.#hot.remember(accountId, c, now)
      const owners = this.ownersOf(accountId)
      if (owners.includes(self)) {
        this.#owned.add(accountId, self, usageOf(c), now)
        touched.push(accountId)
      }
      if (owners.length > (owners.includes(self) ? 1 : 0)) this.#cold.hold(accountId, c, open)
    }
    // Owners chosen as the membership is now: one that changed since the calls goes to the new owners.
    if (report) for (const [accountId, held] of this.#cold.drain()) toOwnersOf(accountId, entryOf(accountId, held.c, held.open))
    // Accounts that turned hot with nothing admitted here since still owe the others their catch-up.
    for (const accountId of this.#hot.takeAllOwed(now)) this.#hot.pushCatchUp(broadcast, accountId, this.#connections.published(accountId), now)
    this.#publish(broadcast)
    for (const [owner, entries] of toOwners) this.#send(`${this.#opts.bus.subjects.owners}.${subjectToken(owner)}`, owner, entries)
    this.#judge(touched, now)
    this.#renew(now)
  }

  #publish(entries: Entry[]): void {
    if (entries.length === 0) return
    for (const [accountId, , , , , open, , , , , , , catchUp] of entries) {
      if (catchUp !== 1) this.#connections.publishing(accountId, open, this.#opts.clock.now())
    }
    this.#send(this.#opts.bus.subjects.limits, undefined, entries)
  }

  #send(subject: string, to: string | undefined, entries: Entry[]): void {
    const from = this.#opts.self.id
    for (let i = 0; i < entries.length; i += MAX_ENTRIES_PER_MESSAGE) {
      const chunk = entries.slice(i, i + MAX_ENTRIES_PER_MESSAGE)
      this.#opts.bus.publish(subject, pack((to === undefined ? { from, entries: chunk } : { from, to, entries: chunk }) satisfies LimitsMessage))
      this.#traffic.messagesOut++
      this.#traffic.entriesOut += chunk.length
    }
  }

  /** As an owner: judge the accounts just heard of, and mark at once those that turned hot. */
  #judge(accountIds: readonly string[], now: number): void {
    if (accountIds.length === 0) return
    const turned: string[] = []
    for (const id of accountIds) if (this.#owned.judge(id, now).turnedHot) turned.push(id)
    this.#announce(this.#owned.announce(turned, now), now)
  }

  /** As an owner: the hot accounts judged again (they cool only after a while under θ/2), their marks renewed. */
  #renew(now: number): void {
    if (this.#owned.hotCount === 0) return
    const hot = this.#owned.hotAccounts().filter((id) => this.#owned.judge(id, now).hot)
    this.#announce(this.#owned.announce(hot, now), now)
  }

  #announce(marks: [string, number][], now: number): void {
    if (marks.length === 0) return
    const { bus } = this.#opts
    for (const [accountId, until] of marks) this.#hot.mark(accountId, until, now)
    for (let i = 0; i < marks.length; i += MAX_ENTRIES_PER_MESSAGE) {
      const hot = marks.slice(i, i + MAX_ENTRIES_PER_MESSAGE).map(([id, until]): [string, number] => [id, until - now])
      bus.publish(bus.subjects.hot, pack({ from: this.#opts.self.id, hot } satisfies HotMessage))
    }
  }

  #cutOff(): void {
    this.#reachable = false
    this.#settlingUntil = Number.POSITIVE_INFINITY
    this.#setShare(shareWhenCutOff(this.#membership.lastSeenCount))
  }

  #heard(member: Member): void {
    if (member.id === this.#membership.self.id) {
      this.#selfHeardAt = this.#opts.clock.now()
      return
    }
    if (member.leaving === true) {
      if (this.#membership.forget(member.id)) this.#left(member.id)
      return
    }
    if (this.#membership.heard(member)) {
      this.#membershipChanged()
      this.#owned.announceAgain()
      this.#opts.onMembership?.('joined', member.id, this.#membership.live().length)
    }
  }

  /** A limits message on the broadcast subject: hot accounts, cooldowns and penalties, open counts. */
  #received(message: LimitsMessage): void {
    const from = message.from
    if (from === this.#membership.self.id) return
    this.#membership.heardFrom(from)
    this.#traffic.messagesIn++
    this.#traffic.entriesIn += message.entries.length
    const now = this.#opts.clock.now()
    const self = this.#opts.self.id
    const shared = this.#ownerPicker().size > 1
    const touched: string[] = []
    for (const entry of message.entries) {
      const accountId = entry[0]
      const c = consumptionOf(entry)
      if (consumes(c)) this.#opts.keys.consumedElsewhere(accountId, c)
      // A catch-up is old news: its open count is not current, and the owners heard it as it happened.
      if (entry[12] === 1) continue
      this.#connections.heard(from, accountId, entry[5])
      if (shared && consumes(c) && this.ownersOf(accountId).includes(self)) {
        this.#owned.add(accountId, from, usageOf(c), now)
        if (c.cooldownUntil > 0 || c.penaltyUntil > 0) this.#owned.block(accountId, Math.max(c.cooldownUntil, c.penaltyUntil))
        touched.push(accountId)
      }
    }
    this.#judge(touched, now)
  }

  /** A report to this instance as an owner: what an instance admitted of cold accounts it owns. */
  #reported(message: LimitsMessage): void {
    if (message.to !== this.#opts.self.id || message.from === this.#opts.self.id) return
    this.#membership.heardFrom(message.from)
    this.#traffic.messagesIn++
    this.#traffic.entriesIn += message.entries.length
    const now = this.#opts.clock.now()
    const touched: string[] = []
    for (const entry of message.entries) {
      this.#owned.add(entry[0], message.from, usageOf(consumptionOf(entry)), now)
      touched.push(entry[0])
    }
    this.#judge(touched, now)
  }

  /** An owner's marks (its own too: it applied them when it sent them, and applying again changes nothing). */
  #marked(message: HotMessage): void {
    if (message.from !== this.#opts.self.id) this.#traffic.messagesIn++
    const now = this.#opts.clock.now()
    for (const [accountId, ms] of message.hot) this.#hot.mark(accountId, now + ms, now)
  }

  #left(id: string): void {
    this.#connections.left(id)
    this.#owned.drop(id)
    this.#membershipChanged()
    this.#opts.onMembership?.('left', id, this.#membership.live().length)
  }

  #membershipChanged(): void {
    this.#picker = undefined
    this.#owners.clear()
    this.#cold.reportEvery(this.#coldIntervalMs())
  }

  /** max(heartbeatMs, N/H s) for the fleet as this instance sees it now (every live member, owning or not). */
  #heartbeatIntervalMs(): number {
    const { heartbeatMs, maxHeartbeatsPerSecond } = this.#opts
    return heartbeatIntervalMs({ heartbeatMs, instances: this.#membership.live().length, maxHeartbeatsPerSecond })
  }

  /** C_eff for the instances that report to owners now (a newcomer's first reports come at the old interval's end). */
  #coldIntervalMs(): number {
    const { coldReportMs, syncMs, maxReportsPerSecond } = this.#opts
    return coldIntervalMs({ coldReportMs: coldReportMs ?? syncMs, instances: this.#ownerPicker().size, maxReportsPerSecond })
  }

  /** The owners' picker over the live members that own (instances of an older version never do). */
  #ownerPicker(): OwnerPicker {
    this.#picker ??= new OwnerPicker(
      this.#membership
        .live()
        .filter((m) => m.owns === true)
        .map((m) => m.id),
    )
    return this.#picker
  }

  /** Once a heartbeat: forget what is older than the window, and the accounts this instance no longer owns. */
  #sweep(now: number): void {
    this.#hot.sweep(now)
    const self = this.#opts.self.id
    this.#owned.sweep(now, (accountId) => this.ownersOf(accountId).includes(self))
  }

  #setShare(share: number): void {
    if (share === this.#share) return
    this.#share = share
    this.#opts.keys.setShare(share)
    this.#opts.onShare?.(share)
  }
}
