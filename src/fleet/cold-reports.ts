import type { Consumption } from '../../actors/account/account-actor.js'

/**
 * What this instance admitted of cold accounts since it last reported them to their owners: one
 * sum per account, sent every C_eff in one message per owner, where C_eff is `fleet.coldReportMs`
 * (C) in a small fleet and (N − 1)/`fleet.maxReportsPerSecond` in a large one
 * (actors/fleet/cold-interval.ts): the fleet sets it again when its membership changes.
 *
 * Why held and not sent every sync: every instance has news for nearly every owner in every
 * interval once accounts are many, so reports every `syncMs` were N − 1 messages per S out of each
 * instance and into each owner (2,000 a second at 100 instances, S = 50 ms). Held for C they are
 * (N − 1)/C, each holding C/S intervals of an account in one entry; what it costs is that an owner
 * sees a cold account's fleet-wide consumption up to C late, which is the C in the overshoot bound's
 * B (docs/fleet.md). Hot accounts, cooldowns and penalties never wait here.
 */
export class ColdReports {
  #held = new Map<string, { c: Consumption; open: number }>()
  readonly #syncMs: number
  /** Syncs between two reports: the interval rounded to whole syncs, at least one. */
  #every: number
  #syncs = 0

  constructor(syncMs: number, intervalMs: number) {
    this.#syncMs = syncMs
    this.#every = syncsIn(intervalMs, syncMs)
  }

  /**
   * Report every `intervalMs` from now on (the fleet grew or shrank). The syncs already counted
   * still count: a fleet that shrank past them reports at its next sync, not an interval later.
   */
  reportEvery(intervalMs: number): void {
    this.#every = syncsIn(intervalMs, this.#syncMs)
  }

  /** The interval as it is applied: whole syncs. */
  get intervalMs(): number {
    return this.#every * this.#syncMs
  }

  /** Hold what an account consumed this sync (`open`: its open connections now). */
  hold(accountId: string, c: Consumption, open: number): void {
    const held = this.#held.get(accountId)
    if (held === undefined) {
      this.#held.set(accountId, { c: { ...c }, open })
      return
    }
    const sum = held.c
    sum.full += c.full
    sum.archive += c.archive
    sum.fullUnits += c.fullUnits
    sum.archiveUnits += c.archiveUnits
    sum.messages += c.messages
    sum.connects += c.connects
    sum.refused = (sum.refused ?? 0) + (c.refused ?? 0)
    if (c.connectedAt !== undefined) sum.connectedAt = Math.max(sum.connectedAt ?? 0, c.connectedAt)
    held.open = open
  }

  /** What is held of one account, no longer held: it turned hot, and its owners hear it now. */
  take(accountId: string): { c: Consumption; open: number } | undefined {
    const held = this.#held.get(accountId)
    if (held !== undefined) this.#held.delete(accountId)
    return held
  }

  /** Called once a sync: whether this one reports (every C/S-th). */
  due(): boolean {
    this.#syncs++
    if (this.#syncs < this.#every) return false
    this.#syncs = 0
    return true
  }

  /** Everything held, no longer held. */
  drain(): Map<string, { c: Consumption; open: number }> {
    const all = this.#held
    this.#held = new Map()
    return all
  }

  get size(): number {
    return this.#held.size
  }
}

/** An interval in whole syncs, at least one. */
function syncsIn(intervalMs: number, syncMs: number): number {
  return Math.max(1, Math.round(intervalMs / syncMs))
}
