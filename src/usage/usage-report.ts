import { addKeyUsage, DAY_MS, HOUR_MS, KEY_USAGE_HOURS_KEPT, type KeyUsage } from '../store/records.js'
import { STATE_VERSION, type StateStore } from '../store/state-store.js'
import { keyUsageFolded, keyUsageFoldedBefore, keyUsageHours } from './usage-queries.js'
import { UsageReportError } from './errors.js'

export type UsagePeriod = 'hour' | 'day'

export { DAY_MS }

/** What `tollgate usage` asks for; absent fields do not narrow. Times are ms since the epoch. */
export interface UsageQuery {
  accountId?: string
  keyId?: string
  /** Hours from the one this falls in. */
  since?: number
  /** Hours that start before this. */
  until?: number
  /** One row per key and period; absent: one row per key. */
  by?: UsagePeriod
}

/** A key's UsageRecorded sums, over the query's time range or one period of it. */
export interface UsageReportRow extends KeyUsage {
  accountId: string
  keyId: string
  /** Start of the period (ms since epoch, a UTC hour or day) when the query had `by`. */
  period?: number
}

export interface UsageReport {
  rows: UsageReportRow[]
  /** What the caller should tell the user beside the rows (periods that cannot be shown). */
  notes: string[]
}

/**
 * Usage per key (and per period) from the projection's sums of UsageRecorded: equal to the sums
 * of the events in the log, exactly, for every key and period it returns. An interval counts in
 * the UTC hour it starts in; `since` is rounded down to its hour. Hours that the store keeps only
 * as totals per key (older than KEY_USAGE_HOURS_KEPT) are counted whole when the query starts at
 * the beginning, and a time bound inside them is refused rather than answered in part.
 * @throws UsageReportError when the store predates these sums, or a bound falls in folded hours
 * @example
 * const { rows } = usageReport(store, { accountId, since: Date.now() - DAY_MS, by: 'hour' })
 */
export function usageReport(store: StateStore, query: UsageQuery): UsageReport {
  if (store.version() < STATE_VERSION) {
    throw new UsageReportError(
      `the state store at ${store.path} was built before usage per key and hour was kept: ` +
        'rebuild it once with `tollgate replay --config FILE` (stop the gateway first), then ask again',
    )
  }
  const notes: string[] = []
  const foldedBefore = keyUsageFoldedBefore(store)
  const keptNote = `usage by hour is kept for the last ${KEY_USAGE_HOURS_KEPT / 24} days of usage; older hours only as totals per key`
  let since = query.since === undefined ? undefined : query.since - (((query.since % HOUR_MS) + HOUR_MS) % HOUR_MS)
  const until = query.until ?? Infinity
  for (const [name, bound] of [
    ['--since', since],
    ['--until', query.until],
  ] as const) {
    if (bound !== undefined && bound < foldedBefore) {
      throw new UsageReportError(
        `${name} ${iso(bound)} falls before ${iso(foldedBefore)}: ${keptNote}. ` +
          `Use ${iso(foldedBefore)} or later, or leave out --since and --until for the totals since the first event`,
      )
    }
  }
  if (query.by !== undefined && since === undefined && foldedBefore > 0) {
    since = foldedBefore
    notes.push(`periods start at ${iso(foldedBefore)}: ${keptNote}`)
  }

  const sums = new Map<string, UsageReportRow>()
  const add = (accountId: string, keyId: string, period: number | undefined, usage: KeyUsage): void => {
    if (query.accountId !== undefined && accountId !== query.accountId) return
    if (query.keyId !== undefined && keyId !== query.keyId) return
    const id = `${accountId}|${keyId}|${period ?? ''}`
    const row = sums.get(id)
    sums.set(id, { accountId, keyId, ...(period === undefined ? {} : { period }), ...addKeyUsage(row, usage) })
  }
  if (since === undefined) for (const row of keyUsageFolded(store, query.accountId)) add(row.accountId, row.keyId, undefined, row)
  for (const row of keyUsageHours(store, since ?? 0, until)) {
    const period = query.by === 'hour' ? row.hour : query.by === 'day' ? row.hour - (row.hour % DAY_MS) : undefined
    add(row.accountId, row.keyId, period, row)
  }
  if (sums.size === 0) refuseUnknown(store, query)
  const rows = [...sums.values()].sort((a, b) => compare(a.accountId, b.accountId) || compare(a.keyId, b.keyId) || (a.period ?? 0) - (b.period ?? 0))
  return { rows, notes }
}

/** No usage for an account or key the store does not know either: most likely a typo, so say so. */
function refuseUnknown(store: StateStore, query: UsageQuery): void {
  if (query.accountId !== undefined && store.account(query.accountId) === undefined) {
    throw new UsageReportError(`no account ${JSON.stringify(query.accountId)} in the state store at ${store.path} (account ids look like acc_0123456789abcdef)`)
  }
  const key = query.keyId === undefined ? undefined : store.keyById(query.keyId)
  if (query.keyId !== undefined && key === undefined) {
    throw new UsageReportError(
      `no key ${JSON.stringify(query.keyId)} in the state store at ${store.path} (a key id is the public id printed with the key, never the key itself)`,
    )
  }
  if (key !== undefined && query.accountId !== undefined && key.accountId !== query.accountId) {
    throw new UsageReportError(`key ${query.keyId} belongs to account ${key.accountId}, not ${query.accountId}`)
  }
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

function iso(ms: number): string {
  return new Date(ms).toISOString()
}
