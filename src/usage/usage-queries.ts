import { unitsOf } from '../events/usage-units.js'
import type { HourlyUsageRow, KeyUsageFoldedRow, KeyUsageHourRow, RefusalsByRule, UsageFilter, UsageRow, UsageTotals } from '../store/records.js'
import { addRefusals, emptyUsage, HOUR_MS, hourlyUsageKey, keyUsageHourKey, keyUsageHourStart } from '../store/records.js'
import type { StateStore } from '../store/state-store.js'
import { KEY_USAGE_FOLDED_BEFORE } from './usage-rows.js'

// Reads of the usage tables that the usage projection keeps (usage-rows.ts), as of the store's
// last commit. Synchronous and cheap per row, as every read of the store is.

/** An account's calls per hour from `from` (ms, inclusive) to `to` (exclusive), by network and node kind. */
export function usageHourly(store: StateStore, accountId: string, from: number, to: number): HourlyUsageRow[] {
  const rows: HourlyUsageRow[] = []
  const range = { start: hourlyUsageKey(accountId, from, '', 'full').split('||')[0], end: hourlyUsageKey(accountId, to, '', 'full').split('||')[0] }
  for (const { key, value } of store.table('usageHourly').getRange(range)) {
    const [, hour, network, kind] = key.split('|') as [string, string, string, HourlyUsageRow['kind']]
    rows.push({ hour: Number(hour), network, kind, requests: value.requests, errors: value.errors, units: unitsOf(value) })
  }
  return rows
}

/** UsageRecorded sums per key of each hour in [from, to) (ms; to may be Infinity) still kept by hour, in hour order. */
export function* keyUsageHours(store: StateStore, from: number, to: number): Generator<KeyUsageHourRow> {
  const range = { start: keyUsageHourStart(Math.max(0, from)), ...(Number.isFinite(to) ? { end: keyUsageHourStart(to) } : {}) }
  for (const { key, value } of store.table('keyUsageHours').getRange(range)) {
    const [hour, accountId, keyId] = key.split('|') as [string, string, string]
    yield { hour: Number(hour), accountId, keyId, ...value, units: unitsOf(value) }
  }
}

/**
 * An account's calls refused by its keys' own rules, by rule, in the hours from `from` (ms,
 * inclusive) to `to` (exclusive), as kept by hour (the last KEY_USAGE_HOURS_KEPT hours): every key of
 * the account, revoked ones included. One seek per hour into keyUsageHours (hour first, then
 * account): the dashboard's longest view, 168 hours, is 168 short ranges.
 */
export function accountRefusals(store: StateStore, accountId: string, from: number, to: number): RefusalsByRule {
  let sum: RefusalsByRule | undefined
  const table = store.table('keyUsageHours')
  for (let hour = from - (from % HOUR_MS); hour < to; hour += HOUR_MS) {
    // `<hour>|<account>|`: the account's keys' rows of that hour follow it, up to '}' (right after '|').
    const first = keyUsageHourKey(hour, accountId, '')
    for (const { value } of table.getRange({ start: first, end: `${first.slice(0, -1)}}` })) sum = addRefusals(sum, value.refused)
  }
  return sum ?? {}
}

/** UsageRecorded sums per key over the hours before keyUsageFoldedBefore(), one account's or all. */
export function* keyUsageFolded(store: StateStore, accountId?: string): Generator<KeyUsageFoldedRow> {
  const range = accountId === undefined ? {} : { start: `${accountId}|`, end: `${accountId}}` }
  for (const { key, value } of store.table('keyUsageFolded').getRange(range)) {
    const [rowAccountId, keyId] = key.split('|') as [string, string]
    yield { accountId: rowAccountId, keyId, ...value, units: unitsOf(value) }
  }
}

/** Hours before this one (ms) are kept only as sums per key (keyUsageFolded); 0 when every hour is kept. */
export function keyUsageFoldedBefore(store: StateStore): number {
  return store.table('meta').get(KEY_USAGE_FOLDED_BEFORE) ?? 0
}

/** Usage rows (one per account, key, network and node kind) that match `filter`, in key order. */
export function usageRows(store: StateStore, filter: UsageFilter = {}): UsageRow[] {
  // An account's rows are one key range: '|' (0x7c) separates fields and '}' (0x7d) sorts
  // right after it, so the range ends exactly after this account's last row.
  const range = filter.accountId === undefined ? {} : { start: `${filter.accountId}|`, end: `${filter.accountId}}` }
  const rows: UsageRow[] = []
  for (const { key, value } of store.table('usage').getRange(range)) {
    const [accountId, keyId, network, kind] = key.split('|') as [string, string, string, UsageRow['kind']]
    if (filter.keyId !== undefined && keyId !== filter.keyId) continue
    if (filter.network !== undefined && network !== filter.network) continue
    if (filter.kind !== undefined && kind !== filter.kind) continue
    rows.push({ accountId, keyId, network, kind, ...value, notifications: value.notifications ?? 0, units: unitsOf(value) })
  }
  return rows
}

/** Usage summed over the rows that match `filter` (everything when absent). */
export function usageTotals(store: StateStore, filter: UsageFilter = {}): UsageTotals {
  const sum = emptyUsage()
  for (const row of usageRows(store, filter)) {
    sum.requests += row.requests
    sum.errors += row.errors
    sum.bytesIn += row.bytesIn
    sum.bytesOut += row.bytesOut
    sum.rateLimited += row.rateLimited
    sum.notifications += row.notifications ?? 0
    sum.units += row.units
  }
  return sum
}
