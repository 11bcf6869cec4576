/**
 * An owner's view of the accounts it owns (see owners.ts): what each instance reported admitting
 * and refusing for them over the last second, and which of them are hot.
 *
 * A cold account is decided by each instance from its own buckets alone, so a key spread over n
 * instances can take up to n times its plan while it stays cold; it stays cold only while the
 * fleet's consumption of the last second is under HOT_FRACTION of every one of its limits. Past
 * that (or on any refusal, which is demand beyond some instance's bucket, or a WebSocket cooldown
 * or penalty) the owner marks it hot, and the instances that serve it share what they admit as
 * every instance once did for every account. It turns cold again only after its consumption stayed
 * under half of that fraction for COOL_MS: a key hovering at the threshold must not flap between
 * the two, each turn costing a catch-up message from every instance.
 *
 * Plain values and time as an argument: nothing here reads a clock or does I/O.
 */

import { coldIntervalMs } from './cold-interval.js'

/** What an instance admitted (and refused) for an account in one report. */
export interface Usage {
  full: number
  archive: number
  fullUnits: number
  archiveUnits: number
  messages: number
  connects: number
  /** Calls and messages refused for a rate: demand beyond what some instance's bucket held. */
  refused: number
}

/** An account's limits per second (null: none), as its plan gives them to the whole fleet. */
export interface RateLimits {
  full: number | null
  archive: number | null
  fullUnits: number | null
  archiveUnits: number | null
  messages: number | null
  connects: number | null
}

/** θ: the part of any limit the fleet's last second may reach before the account turns hot. */
export const HOT_FRACTION = 0.5
/** The sliding window the owner sums, as the buckets' burst is one second of the limit. */
export const WINDOW_MS = 1_000
/** How long the consumption must stay under θ/2 before a hot account turns cold. */
export const COOL_MS = 1_000
/**
 * How long a hot mark holds unless renewed. Renewed at half of it while hot, so a mark lost once
 * does not cool the account; and an owner gone silent stops renewing, so its marks expire on their
 * own (the other owner renews those still hot).
 */
export const HOT_LEASE_MS = 1_000

export const NO_USAGE: Readonly<Usage> = Object.freeze({ full: 0, archive: 0, fullUnits: 0, archiveUnits: 0, messages: 0, connects: 0, refused: 0 })

/**
 * The largest part of any of its limits that `u` is (0 where a limit is unlimited or absent).
 * @example
 * heat({ ...NO_USAGE, full: 30 }, { full: 60, archive: null, fullUnits: null, archiveUnits: null, messages: 60, connects: 15 }) // 0.5
 */
export function heat(u: Usage, limits: RateLimits): number {
  let h = 0
  const part = (used: number, limit: number | null): void => {
    if (limit !== null && limit > 0 && used / limit > h) h = used / limit
  }
  part(u.full, limits.full)
  part(u.archive, limits.archive)
  part(u.fullUnits, limits.fullUnits)
  part(u.archiveUnits, limits.archiveUnits)
  part(u.messages, limits.messages)
  part(u.connects, limits.connects)
  return h
}

/** `into` += `u`, field by field. */
export function addUsage(into: Usage, u: Usage): void {
  into.full += u.full
  into.archive += u.archive
  into.fullUnits += u.fullUnits
  into.archiveUnits += u.archiveUnits
  into.messages += u.messages
  into.connects += u.connects
  into.refused += u.refused
}

interface Owned {
  /**
   * The reports of the last WINDOW_MS in the order they came (so oldest first), from `head` on,
   * and their sum. Kept as a sum because the owner judges an account on every report of it: summing
   * the window each time cost the owner of 10,000 spread accounts on 10 instances 30 % of its CPU
   * (bench/fleet-sim.ts, profiled), where moving the sum costs one add and one subtraction a report.
   */
  reports: { at: number; from: string; u: Usage }[]
  head: number
  readonly sum: Usage
  hot: boolean
  /** Since when a hot account's consumption is under θ/2 (-1: it is not). */
  belowSince: number
  /** A cooldown or penalty of the account runs until then: hot while it does. */
  blockedUntil: number
  /** Until when the instances were last told it is hot (0: not told). */
  announcedUntil: number
  limits: RateLimits | undefined
  limitsAt: number
}

/** Reports older than the window leave the account's sum; the array is compacted once half of it is gone. */
function expire(o: Owned, now: number): void {
  const r = o.reports
  while (o.head < r.length && r[o.head]!.at <= now - WINDOW_MS) {
    const u = r[o.head]!.u
    o.sum.full -= u.full
    o.sum.archive -= u.archive
    o.sum.fullUnits -= u.fullUnits
    o.sum.archiveUnits -= u.archiveUnits
    o.sum.messages -= u.messages
    o.sum.connects -= u.connects
    o.sum.refused -= u.refused
    o.head++
  }
  if (o.head === r.length) {
    // Nothing left in the window: the sum starts from zero again, without what fractional units left of rounding.
    o.reports = []
    o.head = 0
    Object.assign(o.sum, NO_USAGE)
  } else if (o.head > 32 && o.head * 2 > r.length) {
    o.reports = r.slice(o.head)
    o.head = 0
  }
}

/** How long an account's limits are used before they are read again (a plan change shows within this). */
const LIMITS_KEPT_MS = 1_000

/**
 * The accounts an instance owns, with their last second per reporting instance.
 * @example
 * const owned = new OwnedAccounts((id) => limitsOfAccount(id))
 * owned.add('acc_1', 'i3', { ...NO_USAGE, full: 40 }, now)
 * if (owned.judge('acc_1', now).turnedHot) announce(owned.announce(['acc_1'], now))
 */
export class OwnedAccounts {
  readonly #accounts = new Map<string, Owned>()
  readonly #hot = new Set<string>()
  readonly #limitsOf: (accountId: string) => RateLimits | undefined

  constructor(limitsOf: (accountId: string) => RateLimits | undefined) {
    this.#limitsOf = limitsOf
  }

  /** Instance `from` reported `u` for the account at `at`. */
  add(accountId: string, from: string, u: Usage, at: number): void {
    const o = this.#owned(accountId)
    o.reports.push({ at, from, u })
    addUsage(o.sum, u)
    expire(o, at)
  }

  /** A WebSocket cooldown or penalty of the account runs until `until`. */
  block(accountId: string, until: number): void {
    const o = this.#owned(accountId)
    o.blockedUntil = Math.max(o.blockedUntil, until)
  }

  /** The fleet's consumption of the account over the last second, as reported. */
  usage(accountId: string, now: number): Usage {
    const o = this.#accounts.get(accountId)
    if (o === undefined) return { ...NO_USAGE }
    expire(o, now)
    return { ...o.sum }
  }

  /** Whether the account is hot now (see the file's comment for when it turns), and whether it just turned. */
  judge(accountId: string, now: number): { hot: boolean; turnedHot: boolean } {
    const o = this.#accounts.get(accountId)
    if (o === undefined) return { hot: false, turnedHot: false }
    const u = this.usage(accountId, now)
    if (o.limits === undefined || now - o.limitsAt > LIMITS_KEPT_MS) {
      o.limits = this.#limitsOf(accountId)
      o.limitsAt = now
    }
    const h = o.limits === undefined ? 0 : heat(u, o.limits)
    const was = o.hot
    if (h >= HOT_FRACTION || u.refused > 0 || o.blockedUntil > now) {
      o.hot = true
      o.belowSince = -1
    } else if (o.hot) {
      if (h >= HOT_FRACTION / 2) o.belowSince = -1
      else if (o.belowSince < 0) o.belowSince = now
      else if (now - o.belowSince >= COOL_MS) o.hot = false
    }
    if (o.hot) this.#hot.add(accountId)
    else {
      this.#hot.delete(accountId)
      o.announcedUntil = 0
    }
    return { hot: o.hot, turnedHot: o.hot && !was }
  }

  /** The hot accounts (judge them to know whether they still are). */
  hotAccounts(): string[] {
    return [...this.#hot]
  }

  /**
   * The marks to send for `accountIds` that are hot and whose last mark is new (just turned) or past
   * half its lease: [account, hot until]. Renewing at half the lease keeps a mark alive through one
   * lost message.
   */
  announce(accountIds: Iterable<string>, now: number): [accountId: string, hotUntil: number][] {
    const out: [string, number][] = []
    for (const id of accountIds) {
      const o = this.#accounts.get(id)
      if (o === undefined || !o.hot || o.announcedUntil - now > HOT_LEASE_MS / 2) continue
      o.announcedUntil = now + HOT_LEASE_MS
      out.push([id, o.announcedUntil])
    }
    return out
  }

  /**
   * Every hot account's mark is due again at the next announce: an instance that just joined knows
   * none, and would otherwise decide them from its own full buckets until the next renewal.
   */
  announceAgain(): void {
    for (const id of this.#hot) {
      const o = this.#accounts.get(id)
      if (o !== undefined) o.announcedUntil = 0
    }
  }

  /** An instance left the fleet: what it reported stops counting (it admits nothing more). */
  drop(instanceId: string): void {
    for (const o of this.#accounts.values()) {
      if (!o.reports.some((r, i) => i >= o.head && r.from === instanceId)) continue
      o.reports = o.reports.slice(o.head).filter((r) => r.from !== instanceId)
      o.head = 0
      Object.assign(o.sum, NO_USAGE)
      for (const r of o.reports) addUsage(o.sum, r.u)
    }
  }

  /**
   * Forget accounts with nothing reported in the last second that are not hot, and those `owns`
   * says this instance no longer owns (the membership changed): their new owner hears them now.
   */
  sweep(now: number, owns: (accountId: string) => boolean): void {
    for (const [id, o] of this.#accounts) {
      if (!owns(id)) {
        this.#accounts.delete(id)
        this.#hot.delete(id)
        continue
      }
      if (o.hot || o.blockedUntil > now) continue
      if ((o.reports.at(-1)?.at ?? 0) <= now - WINDOW_MS) this.#accounts.delete(id)
    }
  }

  get size(): number {
    return this.#accounts.size
  }

  get hotCount(): number {
    return this.#hot.size
  }

  #owned(accountId: string): Owned {
    let o = this.#accounts.get(accountId)
    if (o === undefined) {
      o = { reports: [], head: 0, sum: { ...NO_USAGE }, hot: false, belowSince: -1, blockedUntil: 0, announcedUntil: 0, limits: undefined, limitsAt: 0 }
      this.#accounts.set(accountId, o)
    }
    return o
  }
}

export interface BoundSettings {
  /** The limit per second (r) and the bucket's burst (b; one second of the limit). */
  limit: number
  burst: number
  /** fleet.syncMs (S), fleet.coldReportMs (C; absent: S) and the delivery lag (L, one way). */
  syncMs: number
  coldReportMs?: number
  lagMs: number
  /** The instances serving the key (n). */
  instances: number
  /**
   * The fleet's live instances (N; absent: n) and fleet.maxReportsPerSecond (M; absent: its
   * default): cold reports go every C_eff = max(C, (N − 1)/M s) (cold-interval.ts), and C_eff is
   * the C of B.
   */
  fleetSize?: number
  maxReportsPerSecond?: number
}

/**
 * The most a key is admitted across the fleet in any one second, as docs/fleet.md ("The overshoot
 * bound") derives it: `limit × (1 + ε) + burst` while it is hot, and `B` more in the seconds
 * around its turning hot, with
 * - ε = (n − 1)(S + L) / 1 s: once hot, each other instance admits at most its refill in the time
 *   its news is on the way;
 * - B = (n − 1)(b + r(C_eff + S + 3L) / 1 s): before every bucket holds the fleet's last second,
 *   each other instance spends at most its own bucket and its refill meanwhile (a cold report
 *   waits up to C_eff and travels L to an owner, the mark L back, the catch-up up to S and L more).
 *   C_eff is C until the fleet's N − 1 others would send more than M reports a second, then (N − 1)/M.
 * @example
 * overshootBound({ limit: 60, burst: 60, syncMs: 50, coldReportMs: 250, lagMs: 5, instances: 5 }) // { epsilon: 0.22, extra: 315.6, hot: 133.2, turning: 448.8, settleMs: 315, coldMs: 250 }
 * overshootBound({ limit: 60, burst: 60, syncMs: 50, coldReportMs: 250, lagMs: 5, instances: 5, fleetSize: 301 }) // C_eff 3 s: { extra: 975.6, turning: 1108.8, settleMs: 3065, coldMs: 3000, … }
 */
export function overshootBound(s: BoundSettings): { epsilon: number; extra: number; hot: number; turning: number; settleMs: number; coldMs: number } {
  const others = Math.max(0, s.instances - 1)
  const epsilon = (others * (s.syncMs + s.lagMs)) / 1_000
  const effective = coldIntervalMs({
    coldReportMs: s.coldReportMs ?? s.syncMs,
    instances: s.fleetSize ?? s.instances,
    maxReportsPerSecond: s.maxReportsPerSecond,
  })
  // A report goes with a sync, so it waits whole syncs: C_eff as ColdReports rounds it.
  const coldMs = Math.max(1, Math.round(effective / s.syncMs)) * s.syncMs
  const settleMs = coldMs + s.syncMs + 3 * s.lagMs
  const extra = others * (s.burst + (s.limit * settleMs) / 1_000)
  const hot = s.limit * (1 + epsilon) + s.burst
  return { epsilon, extra, hot, turning: hot + extra, settleMs, coldMs }
}
