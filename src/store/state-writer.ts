import type { Database } from 'lmdb'
import { sessionOrder } from '../siwe/sessions.js'
import type { AccountRecord, ClaimRecord, HourlyUsage, InvoiceRecord, KeyRecord, KeyUsage, PenaltyRecord, PrivateNodeRecord, SessionRecord, UsageTotals } from './records.js'
import type { NodeKind } from '../events/types.js'
import { BufferedTable } from './buffered-table.js'
import { accountInvoiceKey, accountSessionKey, addKeyUsage, DAY_MS, emptyUsage, HOUR_MS, hourlyUsageKey, KEY_USAGE_HOURS_KEPT, keyUsageFoldedKey, keyUsageHourKey, keyUsageHourStart, USAGE_HOURLY_KEPT_MS } from './records.js'
import { UsageDedup, type CountedEvent } from './usage-dedup.js'

/** The named dbs of the state store (see StateStore). */
export interface StateDbs {
  keys: Database<KeyRecord, string>
  keyIds: Database<string, string>
  accounts: Database<AccountRecord, string>
  wallets: Database<string, string>
  usage: Database<UsageTotals, string>
  /** usageEventKey() → producer: ids of usage events counted in the last minutes of event time (see UsageDedup). */
  usageEvents: Database<string, string>
  /** producer → the newest intervalStart of it that left the id window (see UsageDedup). */
  usageProducers: Database<number, string>
  meta: Database<number, string>
  penalties: Database<PenaltyRecord, string>
  /** sessionHash → dashboard session. */
  sessions: Database<SessionRecord, string>
  /** accountSessionKey() → sessionHash: an account's sessions, to prune them. */
  sessionsByAccount: Database<string, string>
  /** claim key → the first of competing facts (see ClaimRecord). */
  claims: Database<ClaimRecord, string>
  invoices: Database<InvoiceRecord, string>
  /** accountInvoiceKey() → invoiceId. */
  invoicesByAccount: Database<string, string>
  privateNodes: Database<PrivateNodeRecord, string>
  /** hourlyUsageKey() → calls in that hour, for the hours of the last USAGE_HOURLY_KEPT_MS of usage. */
  usageHourly: Database<HourlyUsage, string>
  /** keyUsageHourKey() → a key's UsageRecorded sums in one hour, for the last KEY_USAGE_HOURS_KEPT hours. */
  keyUsageHours: Database<KeyUsage, string>
  /** keyUsageFoldedKey() → a key's UsageRecorded sums over the hours folded out of keyUsageHours. */
  keyUsageFolded: Database<KeyUsage, string>
}

const CHECKPOINT = 'checkpoint'
/** meta: the layout the store was built by (see StateStore.version()). */
export const LAYOUT_VERSION = 'version'
/** meta: the newest hour of usage seen (ms); the window of keyUsageHours ends there. */
export const KEY_USAGE_NEWEST_HOUR = 'keyUsageNewestHour'
/** meta: the newest day (ms) of usage in usageHourly; its window ends there. */
const HOURLY_NEWEST_DAY = 'usageHourlyNewestDay'
/** meta: every hour before this one (ms) is folded into keyUsageFolded; absent: none is. */
export const KEY_USAGE_FOLDED_BEFORE = 'keyUsageFoldedBefore'

/** The dbs as one write transaction sees them: reads see its own writes, kept in memory until flush(). */
type StateTables = { [K in keyof StateDbs]: StateDbs[K] extends Database<infer V, string> ? BufferedTable<V> : never }

/**
 * Typed access to the state store from inside ONE write transaction (StateStore.write). Reads
 * here see the transaction's own writes, which is what lets a projection read-modify-write a
 * record and lets the projector test the checkpoint in the same transaction it moves it.
 * Writes stay in memory (BufferedTable) until the store flushes them at the end of the
 * transaction, so a record changed by many events of a batch is written once.
 * Never keep a reference to it past the callback.
 */
export class StateWriter {
  readonly #t: StateTables
  readonly #usage: UsageDedup
  /** The newest hour of usage LMDB held when this transaction began (see #hourIsNew). */
  #committedNewestHour: number | undefined
  constructor(dbs: StateDbs) {
    const tables: Record<string, BufferedTable<unknown>> = {}
    for (const [name, db] of Object.entries(dbs)) tables[name] = new BufferedTable(db as Database<unknown, string>)
    this.#t = tables as StateTables
    this.#usage = new UsageDedup(this.#t)
  }

  /** Write everything pending into the transaction (StateStore.write, before it commits). */
  flush(): void {
    this.#usage.flush()
    for (const table of Object.values(this.#t)) table.flush()
    this.#endTransaction()
  }

  /** Forget everything pending (the transaction aborts). */
  discard(): void {
    for (const table of Object.values(this.#t)) table.discard()
    this.#endTransaction()
  }

  #endTransaction(): void {
    this.#usage.reset()
    this.#committedNewestHour = undefined
  }

  /**
   * Whether LMDB holds no usage row of `hour`: rows by hour (usageHourly, keyUsageHours) are only
   * written up to the newest hour of UsageRecorded, so in a replay nearly every row of a
   * transaction is new and is not looked up in LMDB.
   */
  #hourIsNew(hour: number): boolean {
    // No newest hour yet: a store of layout 1 (before it was kept) may hold rows of any hour.
    this.#committedNewestHour ??= this.#t.meta.getCommitted(KEY_USAGE_NEWEST_HOUR) ?? ((this.#t.meta.getCommitted(LAYOUT_VERSION) ?? 1) >= 2 ? -Infinity : Infinity)
    return hour > this.#committedNewestHour
  }

  /** The last seq applied (0: nothing yet). */
  checkpoint(): number {
    return this.#t.meta.get(CHECKPOINT) ?? 0
  }
  setCheckpoint(seq: number): void {
    this.#t.meta.put(CHECKPOINT, seq)
  }

  key(keyHash: string): KeyRecord | undefined {
    return this.#t.keys.get(keyHash)
  }
  keyHashOf(keyId: string): string | undefined {
    return this.#t.keyIds.get(keyId)
  }
  putKey(key: KeyRecord): void {
    this.#t.keys.put(key.keyHash, key)
    this.#t.keyIds.put(key.keyId, key.keyHash)
  }

  account(accountId: string): AccountRecord | undefined {
    return this.#t.accounts.get(accountId)
  }
  putAccount(account: AccountRecord): void {
    this.#t.accounts.put(account.accountId, account)
    this.#t.wallets.put(account.wallet, account.accountId)
  }

  penalty(key: string): PenaltyRecord | undefined {
    return this.#t.penalties.get(key)
  }
  putPenalty(key: string, penalty: PenaltyRecord): void {
    this.#t.penalties.put(key, penalty)
  }

  /** Add `delta` to the totals stored under `key` (see usageKey()). */
  addUsage(key: string, delta: Partial<UsageTotals>): void {
    // Changed in place: the row is this transaction's own copy (BufferedTable), and a replay adds
    // to the same rows thousands of times per transaction.
    const row = this.#t.usage.get(key) ?? emptyUsage()
    row.requests += delta.requests ?? 0
    row.errors += delta.errors ?? 0
    row.bytesIn += delta.bytesIn ?? 0
    row.bytesOut += delta.bytesOut ?? 0
    row.rateLimited += delta.rateLimited ?? 0
    // Rows written before notifications were counted have no such field.
    row.notifications = (row.notifications ?? 0) + (delta.notifications ?? 0)
    this.#t.usage.put(key, row)
  }

  session(sessionHash: string): SessionRecord | undefined {
    return this.#t.sessions.get(sessionHash)
  }
  putSession(sessionHash: string, session: SessionRecord): void {
    this.#t.sessions.put(sessionHash, session)
    this.#t.sessionsByAccount.put(accountSessionKey(session.accountId, sessionOrder(session.expiresAt, sessionHash)), sessionHash)
  }
  removeSession(sessionHash: string): void {
    const session = this.#t.sessions.get(sessionHash)
    if (session === undefined) return
    this.#t.sessions.remove(sessionHash)
    this.#t.sessionsByAccount.remove(accountSessionKey(session.accountId, sessionOrder(session.expiresAt, sessionHash)))
  }
  /** The account's sessions (expired ones included), in the order they end in. */
  sessionsOf(accountId: string): Array<{ sessionHash: string; expiresAt: number }> {
    const out: Array<{ sessionHash: string; expiresAt: number }> = []
    for (const { value: sessionHash } of this.#t.sessionsByAccount.range({ start: `${accountId}|`, end: `${accountId}}` })) {
      const session = this.#t.sessions.get(sessionHash)
      if (session !== undefined) out.push({ sessionHash, expiresAt: session.expiresAt })
    }
    return out
  }

  claim(key: string): ClaimRecord | undefined {
    return this.#t.claims.get(key)
  }
  /** Set (or replace) a claim: for markers that are not first-wins, such as a pending activation. */
  putClaim(key: string, claim: ClaimRecord): void {
    this.#t.claims.put(key, claim)
  }
  removeClaim(key: string): void {
    this.#t.claims.remove(key)
  }

  invoice(invoiceId: string): InvoiceRecord | undefined {
    return this.#t.invoices.get(invoiceId)
  }
  putInvoice(invoice: InvoiceRecord): void {
    this.#t.invoices.put(invoice.invoiceId, invoice)
    this.#t.invoicesByAccount.put(accountInvoiceKey(invoice.accountId, invoice.createdAt, invoice.invoiceId), invoice.invoiceId)
  }

  privateNode(accountId: string): PrivateNodeRecord | undefined {
    return this.#t.privateNodes.get(accountId)
  }
  putPrivateNode(record: PrivateNodeRecord): void {
    this.#t.privateNodes.put(record.accountId, record)
  }

  /**
   * Add calls to an account's hourly bucket (the dashboard's chart). When the newest day of usage
   * moves on, every account's hours older than USAGE_HOURLY_KEPT_MS before it are dropped: the
   * table keeps a window, not the history. Only the events' hours decide, so a replay keeps the
   * same rows.
   */
  addHourlyUsage(accountId: string, hour: number, network: string, kind: NodeKind, requests: number, errors: number): void {
    const day = hour - (hour % DAY_MS)
    const newest = this.#t.meta.get(HOURLY_NEWEST_DAY)
    if (newest === undefined || day > newest) {
      this.#t.meta.put(HOURLY_NEWEST_DAY, day)
      if (newest !== undefined) this.#dropHoursBefore(day - USAGE_HOURLY_KEPT_MS)
    }
    const key = hourlyUsageKey(accountId, hour, network, kind)
    const row = this.#hourIsNew(hour) ? this.#t.usageHourly.getPending(key) : this.#t.usageHourly.get(key)
    if (row === undefined) return this.#t.usageHourly.put(key, { requests, errors })
    row.requests += requests
    row.errors += errors
    this.#t.usageHourly.put(key, row)
  }

  /** Drop the hours before `cutoff` of every account: one seek per account (its rows are a key range, oldest first). */
  #dropHoursBefore(cutoff: number): void {
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
   * Add a key's usage to its row of `hour` in keyUsageHours, keeping that table bounded: when the
   * newest hour moves on, the rows that fall out of the last KEY_USAGE_HOURS_KEPT hours are added
   * to their key's row of keyUsageFolded and removed. Usage of an hour folded already (an event
   * sent late after a long outage) goes straight into the folded row. So a key's all-time sums are
   * always its folded row plus its hour rows, exactly. Only the events decide what is folded
   * (never the clock), so a replay folds the same rows.
   */
  addKeyHourUsage(accountId: string, keyId: string, hour: number, usage: KeyUsage): void {
    const newest = this.#t.meta.get(KEY_USAGE_NEWEST_HOUR)
    if (newest === undefined || hour > newest) {
      this.#t.meta.put(KEY_USAGE_NEWEST_HOUR, hour)
      this.#foldKeyUsageBefore(hour - (KEY_USAGE_HOURS_KEPT - 1) * HOUR_MS)
    }
    if (hour < (this.#t.meta.get(KEY_USAGE_FOLDED_BEFORE) ?? 0)) {
      const folded = keyUsageFoldedKey(accountId, keyId)
      this.#t.keyUsageFolded.put(folded, addKeyUsage(this.#t.keyUsageFolded.get(folded), usage))
      return
    }
    const key = keyUsageHourKey(hour, accountId, keyId)
    const row = this.#hourIsNew(hour) ? this.#t.keyUsageHours.getPending(key) : this.#t.keyUsageHours.get(key)
    if (row === undefined) return this.#t.keyUsageHours.put(key, { requests: usage.requests, errors: usage.errors, bytesIn: usage.bytesIn, bytesOut: usage.bytesOut })
    row.requests += usage.requests
    row.errors += usage.errors
    row.bytesIn += usage.bytesIn
    row.bytesOut += usage.bytesOut
    this.#t.keyUsageHours.put(key, row)
  }

  /**
   * Fold the hour rows before `cutoff` into keyUsageFolded. The mark moves only when rows were
   * folded: a store whose usage all lies within the window keeps every hour queryable.
   */
  #foldKeyUsageBefore(cutoff: number): void {
    if (cutoff <= (this.#t.meta.get(KEY_USAGE_FOLDED_BEFORE) ?? 0)) return
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
   * Marks a usage event as counted; false when it already was. The log dedups ids, but only
   * within JetStream's duplicate window: an outbox that re-sends after a long outage stores the
   * same fact at a second seq, and without this guard its usage would be counted twice. The
   * state it keeps for that is bounded (see UsageDedup).
   */
  markUsageCounted(event: CountedEvent): boolean {
    return this.#usage.markCounted(event)
  }
}
