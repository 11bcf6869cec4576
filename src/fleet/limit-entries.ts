import type { Consumption } from '../../actors/account/account-actor.js'
import type { Usage } from '../../actors/fleet/hot-accounts.js'

/**
 * One entry of a limits message: an account, what was admitted for it, its open connections. The
 * compute units and the time of the newest connection come last, so that an instance of an older
 * version, which reads eight fields, still reads the rest (and one of a newer version reads 0
 * units from it). After them, what was refused (for the account's owner), and whether the entry is
 * a catch-up: what the sender admitted over the last second while the account was cold, which
 * the others take from their buckets once it turns hot (an older version applies it as any entry,
 * which is what it is for).
 */
export type Entry = [
  accountId: string,
  full: number,
  archive: number,
  messages: number,
  connects: number,
  open: number,
  cooldownUntil: number,
  penaltyUntil: number,
  fullUnits?: number,
  archiveUnits?: number,
  /** When the newest of `connects` was made (the sender's clock; 0: none). */
  connectedAt?: number,
  refused?: number,
  /** 1: a catch-up, not news (its open count is not current, and the owner heard it already). */
  catchUp?: number,
]

/** What instances send each other: on the broadcast subject, or to one owner (`to`). */
export interface LimitsMessage {
  from: string
  /** The owner it is for (several instance ids may map to one subject token). */
  to?: string
  entries: Entry[]
}

/** An owner's marks: accounts hot for `ms` from when they arrive (a duration, so that clocks need not agree). */
export interface HotMessage {
  from: string
  hot: [accountId: string, ms: number][]
}

export function entryOf(accountId: string, c: Consumption, open: number): Entry {
  return [
    accountId,
    c.full,
    c.archive,
    c.messages,
    c.connects,
    open,
    c.cooldownUntil,
    c.penaltyUntil,
    c.fullUnits,
    c.archiveUnits,
    c.connectedAt ?? 0,
    c.refused ?? 0,
  ]
}

/** Only an open count (the connection allowance's news, for an account whose calls go to its owners). */
export function openEntry(accountId: string, open: number): Entry {
  return [accountId, 0, 0, 0, 0, open, 0, 0]
}

export function consumptionOf(e: Entry): Consumption {
  const [, full, archive, messages, connects, , cooldownUntil, penaltyUntil, fullUnits = 0, archiveUnits = 0, connectedAt, refused = 0] = e
  return { full, archive, fullUnits, archiveUnits, messages, connects, cooldownUntil, penaltyUntil, connectedAt: connectedAt || undefined, refused }
}

export function usageOf(c: Consumption): Usage {
  return {
    full: c.full,
    archive: c.archive,
    fullUnits: c.fullUnits,
    archiveUnits: c.archiveUnits,
    messages: c.messages,
    connects: c.connects,
    refused: c.refused ?? 0,
  }
}

/** Whether the entry holds anything a bucket takes (an open count alone does not). */
export function consumes(c: Consumption): boolean {
  return c.full + c.archive + c.fullUnits + c.archiveUnits + c.messages + c.connects > 0 || c.cooldownUntil > 0 || c.penaltyUntil > 0
}

/** The sum of `list` (what one instance admitted over several intervals), the newest connection's time kept. */
export function summed(list: readonly Consumption[]): Consumption {
  const sum: Consumption = { full: 0, archive: 0, fullUnits: 0, archiveUnits: 0, messages: 0, connects: 0, cooldownUntil: 0, penaltyUntil: 0, refused: 0 }
  for (const c of list) {
    sum.full += c.full
    sum.archive += c.archive
    sum.fullUnits += c.fullUnits
    sum.archiveUnits += c.archiveUnits
    sum.messages += c.messages
    sum.connects += c.connects
    if (c.connectedAt !== undefined) sum.connectedAt = Math.max(sum.connectedAt ?? 0, c.connectedAt)
  }
  return sum
}

/** An instance id as one token of a NATS subject (a host name's dots would make several). */
export function subjectToken(id: string): string {
  return id.replace(/[^A-Za-z0-9_-]/g, '_')
}
