import type { NodeKind } from '../core/node-kind.js'
import type { KeyRuleRefused, UsageRecorded } from '../events/types.js'
import { unitsOf } from '../events/usage-units.js'
import type { BufferedTable } from '../store/buffered-table.js'
import type { HourlyUsage, KeyUsage, RefusalsByRule, UsageTotals } from '../store/records.js'
import {
  addKeyUsage,
  DAY_MS,
  emptyUsage,
  HOUR_MS,
  hourlyUsageKey,
  KEY_USAGE_HOURS_KEPT,
  keyUsageFoldedKey,
  keyUsageHourKey,
  keyUsageHourStart,
  LAYOUT_VERSION,
  USAGE_HOURLY_KEPT_MS,
  usageKey,
} from '../store/records.js'

/** meta: the newest hour of usage seen (ms); the window of keyUsageHours ends there. */
export const KEY_USAGE_NEWEST_HOUR = 'keyUsageNewestHour'
/** meta: the newest day (ms) of usage in usageHourly; its window ends there. */
const HOURLY_NEWEST_DAY = 'usageHourlyNewestDay'
/** meta: every hour before this one (ms) is folded into keyUsageFolded; absent: none is. */
export const KEY_USAGE_FOLDED_BEFORE = 'keyUsageFoldedBefore'

export interface UsageRowTables {
  /** usageKey() → a key's totals on one network and node kind, for ever. */
  usage: BufferedTable<UsageTotals>
  /** hourlyUsageKey() → an account's calls in one hour (the dashboard's chart), the last days. */
  usageHourly: BufferedTable<HourlyUsage>
  /** keyUsageHourKey() → a key's UsageRecorded sums and KeyRuleRefused by rule in one hour (`tollgate usage`), the last weeks. */
  keyUsageHours: BufferedTable<KeyUsage>
  /** keyUsageFoldedKey() → a key's UsageRecorded sums over the hours folded out of keyUsageHours. */
  keyUsageFolded: BufferedTable<KeyUsage>
  meta: BufferedTable<number>
}

/** Whose usage, where and when: a usage event has all of it. */
export interface UsageScope {
  accountId: string
  keyId: string
  network: string
  kind: NodeKind
  /** The interval's start (ms); it counts in the hour it starts in. */
  intervalStart: number
}

/** What a usage event adds by hour: to its key's hour, and to its account's hour when it served calls. */
export interface UsageByHour {
  key: KeyUsage
  account?: HourlyUsage
}

/** One key's usage on one network and node kind in one hour, summed over a transaction's events. */
interface Sums {
  accountId: string
  keyId: string
  network: string
  kind: NodeKind
  hour: number
  totals: UsageTotals
  key: KeyUsage | undefined
  account: HourlyUsage | undefined
}

/** One key's refusals by rule in one hour, summed over a transaction's KeyRuleRefused. */
interface Refusals {
  accountId: string
  keyId: string
  hour: number
  refused: RefusalsByRule
}

/**
 * The usage read models, written inside one transaction: totals per key (`usage`), calls per
 * account and hour for the dashboard (`usageHourly`, a window of days), and UsageRecorded sums per
 * key and hour (`keyUsageHours`, a window of weeks, older hours folded into `keyUsageFolded`).
 *
 * Events are summed in memory per key, network, node kind and hour, and the sums are added to the
 * tables when the transaction is flushed, or before a window moves (so that the window sees every
 * row it would have seen event by event): one map entry per event instead of three rows, whose
 * keys were a third of a replay's projection time. The windows move with the events' hours,
 * never the clock, so a replay keeps and drops the same rows as live projection, whatever its
 * transactions.
 */
export class UsageRows {
  readonly #t: UsageRowTables
  /** This transaction's sums, in the order they began (see #sumsOf). */
  readonly #sums: Sums[] = []
  /** The same by key id. */
  readonly #byKey = new Map<string, Sums[]>()
  /** This transaction's refusals, by `accountId|keyId|hour` (see addRefused). */
  readonly #refusals = new Map<string, Refusals>()
  /** The newest hour of usage LMDB held when this transaction began (see #hourIsNew). */
  #committedNewestHour: number | undefined
  /** Rows by hour of no hour after this one were written out in this transaction (see #moveKeyHours). */
  #writtenOutNewestHour = -Infinity
  /** The oldest hour this transaction put into keyUsageHours (see #mayHoldKeyHoursBefore). */
  #oldestKeyHourPut = Infinity
  /**
   * meta's newest hour of usage and newest day of account hours as this transaction has them
   * (NaN: not read yet, -Infinity: none): every usage event asks whether its hour moves a window,
   * and each asking was a lookup in meta's pending writes (two an event).
   */
  #newestHour = Number.NaN
  #newestDay = Number.NaN

  constructor(tables: UsageRowTables) {
    this.#t = tables
  }

  /**
   * Add a counted usage event: `totals` to its key's totals, `byHour` (UsageRecorded) to its key's
   * hour and, with `account`, to its account's hour.
   */
  add(scope: UsageScope, totals: Partial<UsageTotals>, byHour?: UsageByHour): void {
    const hour = scope.intervalStart - (scope.intervalStart % HOUR_MS)
    if (byHour !== undefined) {
      this.#moveKeyHours(hour)
      if (byHour.account !== undefined) this.#moveAccountHours(hour)
    }
    const sums = this.#sumsOf(scope, hour)
    const sum = sums.totals
    sum.units += totals.units ?? 0
    sum.requests += totals.requests ?? 0
    sum.errors += totals.errors ?? 0
    sum.bytesIn += totals.bytesIn ?? 0
    sum.bytesOut += totals.bytesOut ?? 0
    sum.rateLimited += totals.rateLimited ?? 0
    sum.notifications! += totals.notifications ?? 0
    if (byHour === undefined) return
    sums.key ??= { requests: 0, errors: 0, bytesIn: 0, bytesOut: 0, units: 0 }
    sums.key.units += byHour.key.units
    sums.key.requests += byHour.key.requests
    sums.key.errors += byHour.key.errors
    sums.key.bytesIn += byHour.key.bytesIn
    sums.key.bytesOut += byHour.key.bytesOut
    if (byHour.account !== undefined) {
      sums.account ??= { requests: 0, errors: 0, units: 0 }
      sums.account.units += byHour.account.units
      sums.account.requests += byHour.account.requests
      sums.account.errors += byHour.account.errors
    }
  }

  /**
   * add() of a UsageRecorded with its `units` (unitsOf), summed as add() sums it but without
   * building its figures as three objects first: nineteen events in twenty of a replay are these.
   */
  addRecorded(e: UsageRecorded, units: number): void {
    const hour = e.intervalStart - (e.intervalStart % HOUR_MS)
    const served = e.requests > 0
    this.#moveKeyHours(hour)
    if (served) this.#moveAccountHours(hour)
    const sums = this.#sumsOf(e, hour)
    const sum = sums.totals
    sum.units += units ?? 0
    sum.requests += e.requests ?? 0
    sum.errors += e.errors ?? 0
    sum.bytesIn += e.bytesIn ?? 0
    sum.bytesOut += e.bytesOut ?? 0
    const key = (sums.key ??= { requests: 0, errors: 0, bytesIn: 0, bytesOut: 0, units: 0 })
    key.units += units
    key.requests += e.requests
    key.errors += e.errors
    key.bytesIn += e.bytesIn
    key.bytesOut += e.bytesOut
    if (served) {
      const account = (sums.account ??= { requests: 0, errors: 0, units: 0 })
      account.units += units
      account.requests += e.requests
      account.errors += e.errors
    }
  }

  /**
   * Add a counted KeyRuleRefused to its key's hour (keyUsageHours' `refused`, beside the calls
   * served): neither to the key's totals nor to its account's hour, whose rows are per node kind,
   * which a refusal has not (the rules are judged before a call is routed). The dashboard reads an
   * account's refusals from its keys' hours (usage-queries.ts, accountRefusals).
   */
  addRefused(e: KeyRuleRefused): void {
    const hour = e.intervalStart - (e.intervalStart % HOUR_MS)
    this.#moveKeyHours(hour)
    const id = `${e.accountId}|${e.keyId}|${hour}`
    let sums = this.#refusals.get(id)
    if (sums === undefined) this.#refusals.set(id, (sums = { accountId: e.accountId, keyId: e.keyId, hour, refused: {} }))
    sums.refused[e.rule] = (sums.refused[e.rule] ?? 0) + e.count
  }

  /**
   * The sums of a key on a network and node kind in an hour, found by its key id and then
   * compared field by field: a string of five fields built and hashed per event was a third of
   * add()'s time, and the strings of a replay's events are interned (BatchDecoder), so that
   * comparing them is comparing references.
   */
  #sumsOf(scope: UsageScope, hour: number): Sums {
    const { accountId, keyId, network, kind } = scope
    let list = this.#byKey.get(keyId)
    if (list === undefined) this.#byKey.set(keyId, (list = []))
    for (const sums of list) {
      if (sums.hour === hour && sums.network === network && sums.kind === kind && sums.accountId === accountId) return sums
    }
    // The fields, not the scope: an event is not kept until the flush.
    const sums: Sums = { accountId, keyId, network, kind, hour, totals: emptyUsage(), key: undefined, account: undefined }
    list.push(sums)
    this.#sums.push(sums)
    return sums
  }

  /** Add the sums to the tables (before they are flushed into the transaction). */
  flush(): void {
    const foldedBefore = this.#t.meta.get(KEY_USAGE_FOLDED_BEFORE) ?? 0
    for (const { accountId, keyId, network, kind, hour, totals, key, account } of this.#sums) {
      const usage = usageKey(accountId, keyId, network, kind)
      // Changed in place: the row is this transaction's own copy (BufferedTable).
      const row = this.#t.usage.get(usage) ?? emptyUsage()
      // Before requests grow: a row written before units has its units from its requests (unitsOf).
      row.units = unitsOf(row) + totals.units
      row.requests += totals.requests
      row.errors += totals.errors
      row.bytesIn += totals.bytesIn
      row.bytesOut += totals.bytesOut
      row.rateLimited += totals.rateLimited
      // Rows written before notifications were counted have no such field.
      row.notifications = (row.notifications ?? 0) + totals.notifications!
      this.#t.usage.put(usage, row)
      if (account !== undefined) {
        const hourly = hourlyUsageKey(accountId, hour, network, kind)
        const before = this.#hourIsNew(hour) ? this.#t.usageHourly.getPending(hourly) : this.#t.usageHourly.get(hourly)
        this.#t.usageHourly.put(
          hourly,
          before === undefined
            ? account
            : { requests: before.requests + account.requests, errors: before.errors + account.errors, units: unitsOf(before) + account.units },
        )
      }
      if (key !== undefined) this.#addToKeyHour(accountId, keyId, hour, key, foldedBefore)
    }
    for (const { accountId, keyId, hour, refused } of this.#refusals.values()) {
      const usage = addKeyUsage(undefined, { requests: 0, errors: 0, bytesIn: 0, bytesOut: 0, units: 0, refused })
      // Refusals of none (count 0): no row for them.
      if (usage.refused !== undefined) this.#addToKeyHour(accountId, keyId, hour, usage, foldedBefore)
    }
    this.#sums.length = 0
    this.#byKey.clear()
    this.#refusals.clear()
  }

  /** Add `usage` to a key's row of `hour`, or to its folded row when that hour is folded already. */
  #addToKeyHour(accountId: string, keyId: string, hour: number, usage: KeyUsage, foldedBefore: number): void {
    if (hour < foldedBefore) {
      // An hour folded already (usage sent late after a long outage): straight into the folded row.
      const folded = keyUsageFoldedKey(accountId, keyId)
      this.#t.keyUsageFolded.put(folded, addKeyUsage(this.#t.keyUsageFolded.get(folded), usage))
      return
    }
    if (hour < this.#oldestKeyHourPut) this.#oldestKeyHourPut = hour
    const keyHour = keyUsageHourKey(hour, accountId, keyId)
    const before = this.#hourIsNew(hour) ? this.#t.keyUsageHours.getPending(keyHour) : this.#t.keyUsageHours.get(keyHour)
    this.#t.keyUsageHours.put(keyHour, before === undefined ? usage : addKeyUsage(before, usage))
  }

  /** The transaction ended (or aborts): forget its sums; what LMDB holds may have changed. */
  reset(): void {
    this.#sums.length = 0
    this.#byKey.clear()
    this.#refusals.clear()
    this.#committedNewestHour = undefined
    this.#writtenOutNewestHour = -Infinity
    this.#oldestKeyHourPut = Infinity
    this.#newestHour = Number.NaN
    this.#newestDay = Number.NaN
  }

  /**
   * When the newest day of usage moves on, every account's hours older than USAGE_HOURLY_KEPT_MS
   * before it are dropped: usageHourly keeps a window, not the history.
   */
  #moveAccountHours(hour: number): void {
    const day = hour - (hour % DAY_MS)
    if (day <= this.#newestDay) return
    const newest = this.#t.meta.get(HOURLY_NEWEST_DAY)
    this.#newestDay = newest ?? Number.NEGATIVE_INFINITY
    if (newest !== undefined && day <= newest) return
    this.flush()
    this.#t.meta.put(HOURLY_NEWEST_DAY, day)
    this.#newestDay = day
    if (newest !== undefined && this.#mayHoldAccountHoursBefore(day - USAGE_HOURLY_KEPT_MS)) this.#dropAccountHoursBefore(day - USAGE_HOURLY_KEPT_MS)
  }

  /** Drop the hours before `cutoff` of every account: one seek per account (its rows are a key range, oldest first). */
  #dropAccountHoursBefore(cutoff: number): void {
    const old: string[] = []
    let start = ''
    for (;;) {
      let first: string | undefined
      for (const key of this.#t.usageHourly.keys({ start, limit: 1 })) first = key
      if (first === undefined) break
      const accountId = first.slice(0, first.indexOf('|'))
      const end = hourlyUsageKey(accountId, cutoff, '', 'full').split('||')[0]!
      for (const key of this.#t.usageHourly.keys({ start: `${accountId}|`, end })) old.push(key)
      start = `${accountId}}` // right after this account's last row ('}' sorts after '|')
    }
    for (const key of old) this.#t.usageHourly.remove(key)
  }

  /**
   * When the newest hour moves on, the rows of keyUsageHours that fall out of the last
   * KEY_USAGE_HOURS_KEPT hours are added to their key's row of keyUsageFolded and removed. So a
   * key's all-time sums are always its folded row plus its hour rows, exactly.
   */
  #moveKeyHours(hour: number): void {
    if (hour <= this.#newestHour) return
    const newest = this.#t.meta.get(KEY_USAGE_NEWEST_HOUR)
    this.#newestHour = newest ?? Number.NEGATIVE_INFINITY
    if (newest !== undefined && hour <= newest) return
    this.flush()
    if (newest !== undefined) {
      // The hours done so far leave memory for the transaction: a transaction of a history
      // spread over many hours holds a row per key and hour, 20 MB more of heap at its end
      // (a replay of a week). Rows are of hours up to the newest seen.
      this.#t.keyUsageHours.writeOut()
      this.#t.usageHourly.writeOut()
      this.#writtenOutNewestHour = newest
    }
    this.#t.meta.put(KEY_USAGE_NEWEST_HOUR, hour)
    this.#newestHour = hour
    this.#foldKeyHoursBefore(hour - (KEY_USAGE_HOURS_KEPT - 1) * HOUR_MS)
  }

  /**
   * Fold the hour rows before `cutoff` into keyUsageFolded. The mark moves only when rows were
   * folded: a store whose usage all lies within the window keeps every hour queryable.
   */
  #foldKeyHoursBefore(cutoff: number): void {
    if (cutoff <= (this.#t.meta.get(KEY_USAGE_FOLDED_BEFORE) ?? 0)) return
    if (!this.#mayHoldKeyHoursBefore(cutoff)) return
    const old = [...this.#t.keyUsageHours.range({ end: keyUsageHourStart(cutoff) })]
    if (old.length === 0) return
    for (const { key, value } of old) {
      const [, accountId, keyId] = key.split('|') as [string, string, string]
      const folded = keyUsageFoldedKey(accountId, keyId)
      this.#t.keyUsageFolded.put(folded, addKeyUsage(this.#t.keyUsageFolded.get(folded), value))
      this.#t.keyUsageHours.remove(key)
    }
    this.#t.meta.put(KEY_USAGE_FOLDED_BEFORE, cutoff)
  }

  /**
   * Whether keyUsageHours may hold a row older than `cutoff`, without a range over it: a range
   * writes the transaction's rows through to LMDB first, after which every new row of the
   * transaction is looked up in LMDB (getPending). Until a history is older than the window, no
   * hour has anything to fold, and a history spread over many hours moved the window (and wrote
   * through) at every hour: most of a replay's time in its rows. False only when neither the
   * oldest row LMDB holds nor any row this transaction put is older than `cutoff`.
   */
  #mayHoldKeyHoursBefore(cutoff: number): boolean {
    if (this.#oldestKeyHourPut < cutoff) return true
    const start = keyUsageHourStart(cutoff)
    for (const { key } of this.#t.keyUsageHours.committed({ limit: 1 })) return key < start
    return false
  }

  /**
   * Whether usageHourly may hold a row older than `cutoff`, without a seek per account (and the
   * write-through of keys(), see #mayHoldKeyHoursBefore): an account's hour is only ever written
   * beside its key's hour (addRecorded), so while no key hour has been folded, in a store whose
   * layout kept key hours from its first event (2 on), no account hour is older than the oldest key hour.
   */
  #mayHoldAccountHoursBefore(cutoff: number): boolean {
    if (this.#t.meta.get(KEY_USAGE_FOLDED_BEFORE) !== undefined) return true
    if ((this.#t.meta.getCommitted(LAYOUT_VERSION) ?? 1) < 2) return true
    return this.#mayHoldKeyHoursBefore(cutoff)
  }

  /**
   * Whether LMDB holds no usage row of `hour`: rows by hour (usageHourly, keyUsageHours) are only
   * written up to the newest hour of UsageRecorded, so in a replay nearly every row of a
   * transaction is new and is not looked up in LMDB.
   */
  #hourIsNew(hour: number): boolean {
    // No newest hour yet: a store of layout 1 (before it was kept) may hold rows of any hour.
    this.#committedNewestHour ??=
      this.#t.meta.getCommitted(KEY_USAGE_NEWEST_HOUR) ?? ((this.#t.meta.getCommitted(LAYOUT_VERSION) ?? 1) >= 2 ? -Infinity : Infinity)
    return hour > this.#committedNewestHour && hour > this.#writtenOutNewestHour
  }
}
