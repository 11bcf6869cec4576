import type { Database } from 'lmdb'
import { sessionOrder } from '../siwe/sessions.js'
import type {
  AccountRecord,
  ClaimRecord,
  HourlyUsage,
  InvoiceRecord,
  KeyRecord,
  KeyUsage,
  PenaltyRecord,
  PrivateNodeRecord,
  SessionRecord,
  UsageTotals,
} from './records.js'
import { BufferedTable } from './buffered-table.js'
import { accountInvoiceKey, accountSessionKey } from './records.js'
import { UsageDedup, type CountedEvent } from './usage-dedup.js'
import { UsageRows, type UsageByHour, type UsageScope } from './usage-rows.js'

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
export { LAYOUT_VERSION } from './records.js'
export { KEY_USAGE_FOLDED_BEFORE, KEY_USAGE_NEWEST_HOUR } from './usage-rows.js'
export type { UsageByHour, UsageScope } from './usage-rows.js'

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
  readonly #usageRows: UsageRows
  constructor(dbs: StateDbs) {
    const tables: Record<string, BufferedTable<unknown>> = {}
    for (const [name, db] of Object.entries(dbs)) tables[name] = new BufferedTable(db as Database<unknown, string>)
    this.#t = tables as StateTables
    this.#usage = new UsageDedup(this.#t)
    this.#usageRows = new UsageRows(this.#t)
  }

  /** Write everything pending into the transaction (StateStore.write, before it commits). */
  flush(): void {
    this.#usage.flush()
    this.#usageRows.flush()
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
    this.#usageRows.reset()
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

  /**
   * Add a counted usage event's figures (see UsageRows): `totals` to its key's totals, `byHour`
   * (UsageRecorded) to its key's hour and, with `account`, to its account's hour.
   */
  addUsage(scope: UsageScope, totals: Partial<UsageTotals>, byHour?: UsageByHour): void {
    this.#usageRows.add(scope, totals, byHour)
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
   * Marks a usage event as counted; false when it already was. The log dedups ids, but only
   * within JetStream's duplicate window: an outbox that re-sends after a long outage stores the
   * same fact at a second seq, and without this guard its usage would be counted twice. The
   * state it keeps for that is bounded (see UsageDedup).
   */
  markUsageCounted(event: CountedEvent): boolean {
    return this.#usage.markCounted(event)
  }
}
