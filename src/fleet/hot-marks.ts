import { WINDOW_MS } from '../../actors/fleet/hot-accounts.js'
import type { Consumption } from '../../actors/account/account-actor.js'
import { consumes, entryOf, summed, type Entry } from './limit-entries.js'

/**
 * The accounts an owner marked hot, as this instance was told, and what it owes the others when
 * one turns hot: what it admitted of it over the last second while it was cold, which went to the
 * owners only. Without that catch-up each bucket would start the hot period as full as its own
 * instance's consumption left it, and the fleet would admit up to n buckets.
 */
export class HotMarks {
  /** Accounts an owner marked hot, until when (this instance's clock). */
  readonly #hotUntil = new Map<string, number>()
  /** Accounts that turned hot here since the last sync: their catch-up is owed to the others. */
  readonly #owed = new Set<string>()
  /** What this instance reported to owners only, per account, over the last second: the catch-up. */
  readonly #recent = new Map<string, { at: number; c: Consumption }[]>()

  isHot(accountId: string, now: number): boolean {
    const until = this.#hotUntil.get(accountId)
    if (until === undefined) return false
    if (until > now) return true
    this.#hotUntil.delete(accountId)
    return false
  }

  /** Accounts hot now. */
  count(now: number): number {
    let n = 0
    for (const until of this.#hotUntil.values()) if (until > now) n++
    return n
  }

  /** An owner's mark: hot until `until` here. Turning hot here, the account owes its catch-up. */
  mark(accountId: string, until: number, now: number): void {
    if (!this.isHot(accountId, now)) this.#owed.add(accountId)
    this.#hotUntil.set(accountId, Math.max(until, this.#hotUntil.get(accountId) ?? 0))
  }

  /** What was reported of a cold account, remembered for a second in case it turns hot. */
  remember(accountId: string, c: Consumption, now: number): void {
    let list = this.#recent.get(accountId)
    if (list === undefined) this.#recent.set(accountId, (list = []))
    list.push({ at: now, c })
    while (list.length > 0 && list[0]!.at <= now - WINDOW_MS) list.shift()
  }

  /** Whether the account's catch-up is owed (it is then no longer: the caller sends it now). */
  takeOwed(accountId: string): boolean {
    return this.#owed.delete(accountId)
  }

  /** The accounts whose catch-up is still owed and that are hot now; none is owed after this. */
  takeAllOwed(now: number): string[] {
    const owed = [...this.#owed].filter((accountId) => this.isHot(accountId, now))
    this.#owed.clear()
    return owed
  }

  /**
   * The account's catch-up entry into `into` (with `open`, its current open count as published):
   * sent once, so that every bucket holds the fleet's last second from then on.
   */
  pushCatchUp(into: Entry[], accountId: string, open: number, now: number): void {
    const list = this.#recent.get(accountId)
    this.#recent.delete(accountId)
    if (list === undefined) return
    const c = summed(list.filter((r) => r.at > now - WINDOW_MS).map((r) => r.c))
    if (!consumes(c)) return
    const entry = entryOf(accountId, c, open)
    entry[11] = 0
    entry[12] = 1
    into.push(entry)
  }

  /** Forget what is older than the window and the marks that ran out. */
  sweep(now: number): void {
    for (const [accountId, list] of this.#recent) if ((list.at(-1)?.at ?? 0) <= now - WINDOW_MS) this.#recent.delete(accountId)
    for (const [accountId, until] of this.#hotUntil) if (until <= now) this.#hotUntil.delete(accountId)
  }
}
