import type { Clock } from '../../actors/runtime/clock.js'

/**
 * Bytes of a notification per compute unit: Alchemy prices subscription events by bandwidth,
 * 0.04 units per byte delivered, the same for every kind (a ~1 KB event is 40 units): the hosted
 * price clients know. A newHeads notification (~800 bytes on mainnet) is about 32 units, a logs
 * one (~600 bytes) about 24, a newPendingTransactions hash (~150 bytes) 6.
 */
export const NOTIFICATION_BYTES_PER_UNIT = 25

/** The compute units of a notification of `bytes` bytes (docs/costs.md). */
export function notificationUnits(bytes: number): number {
  return Math.ceil(bytes / NOTIFICATION_BYTES_PER_UNIT)
}

/**
 * A second's worth of units is not enough for one block: a block's notifications all arrive at
 * once. Two seconds' worth may be delivered at once, then the rate holds.
 */
const BURST_SECONDS = 2

interface AccountBudget {
  /**
   * Units left at `at`, changed in place: this is read for every copy of every notification, and
   * the token bucket's values (a new object per take) made garbage at the rate of the fan-out.
   */
  tokens: number
  at: number
  /** Its connections open on this instance: the entry goes with the last. */
  connections: number
}

/**
 * The units of notifications each account may be sent per second on this instance, across its
 * connections (ws.notificationUnitsPerSecond): subscriptions are shared upstream, so a key's
 * duplicate subscriptions cost the node nothing, but each copy delivered costs the gateway a send;
 * 10 connections × 100 identical `logs` subscriptions turned 40 logs into 20,000 notifications.
 * Each delivered copy counts. Entries exist only while an account has connections open.
 * @example
 * budgets.open(accountId); if (!budgets.spend(accountId, notificationUnits(text.length))) session.end(...)
 */
export class NotificationBudgets {
  readonly #accounts = new Map<string, AccountBudget>()

  constructor(
    /** Units per second per account; null: no budget. Changed by a reload (retune). */
    private perSecond: number | null,
    private readonly clock: Clock,
  ) {}

  /** A reload's budget, for the notifications from now on. */
  retune(perSecond: number | null): void {
    this.perSecond = perSecond
  }

  /** A connection of the account opened. */
  open(accountId: string): void {
    const a = this.#accounts.get(accountId)
    if (a !== undefined) a.connections++
    else this.#accounts.set(accountId, { tokens: this.#burst(), at: this.clock.now(), connections: 1 })
  }

  /** A connection of the account closed. */
  close(accountId: string): void {
    const a = this.#accounts.get(accountId)
    if (a !== undefined && --a.connections <= 0) this.#accounts.delete(accountId)
  }

  /** Take `units` from the account's budget: false when it has not that many left (the notification must not go). */
  spend(accountId: string, units: number): boolean {
    const perSecond = this.perSecond
    if (perSecond === null) return true
    const a = this.#accounts.get(accountId)
    if (a === undefined) return true
    const now = this.clock.now()
    // A clock that steps back (NTP) must not drain the budget: elapsed time is never negative.
    if (now > a.at) {
      a.tokens = Math.min(this.#burst(), a.tokens + ((now - a.at) * perSecond) / 1000)
      a.at = now
    }
    if (a.tokens < units) return false
    a.tokens -= units
    return true
  }

  /** Accounts with connections open (for tests and /metrics). */
  get size(): number {
    return this.#accounts.size
  }

  #burst(): number {
    return (this.perSecond ?? 0) * BURST_SECONDS
  }
}
