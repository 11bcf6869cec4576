import type { Database } from 'lmdb'
import type { AccountRecord, ClaimRecord, HourlyUsage, InvoiceRecord, KeyRecord, PenaltyRecord, PrivateNodeRecord, SessionRecord, UsageTotals } from './records.js'
import { accountInvoiceKey, emptyUsage } from './records.js'

/** The named dbs of the state store (see StateStore). */
export interface StateDbs {
  keys: Database<KeyRecord, string>
  keyIds: Database<string, string>
  accounts: Database<AccountRecord, string>
  wallets: Database<string, string>
  usage: Database<UsageTotals, string>
  /** UsageRecorded/RateLimited ids already summed → their intervalStart (to prune old ids by age one day). */
  usageEvents: Database<number, string>
  meta: Database<number, string>
  penalties: Database<PenaltyRecord, string>
  /** sessionHash → dashboard session. */
  sessions: Database<SessionRecord, string>
  /** claim key → the first of competing facts (see ClaimRecord). */
  claims: Database<ClaimRecord, string>
  invoices: Database<InvoiceRecord, string>
  /** accountInvoiceKey() → invoiceId. */
  invoicesByAccount: Database<string, string>
  privateNodes: Database<PrivateNodeRecord, string>
  /** hourlyUsageKey() → calls in that hour. */
  usageHourly: Database<HourlyUsage, string>
}

const CHECKPOINT = 'checkpoint'

/**
 * Typed access to the state store from inside ONE write transaction (StateStore.write). Reads
 * here see the transaction's own writes, which is what lets a projection read-modify-write a
 * record and lets the projector test the checkpoint in the same transaction it moves it.
 * Never keep a reference to it past the callback: outside a transaction its writes would each
 * be their own transaction.
 */
export class StateWriter {
  readonly #dbs: StateDbs
  constructor(dbs: StateDbs) {
    this.#dbs = dbs
  }

  /** The last seq applied (0: nothing yet). */
  checkpoint(): number {
    return this.#dbs.meta.get(CHECKPOINT) ?? 0
  }
  setCheckpoint(seq: number): void {
    this.#dbs.meta.put(CHECKPOINT, seq)
  }

  key(keyHash: string): KeyRecord | undefined {
    return this.#dbs.keys.get(keyHash)
  }
  keyHashOf(keyId: string): string | undefined {
    return this.#dbs.keyIds.get(keyId)
  }
  putKey(key: KeyRecord): void {
    this.#dbs.keys.put(key.keyHash, key)
    this.#dbs.keyIds.put(key.keyId, key.keyHash)
  }

  account(accountId: string): AccountRecord | undefined {
    return this.#dbs.accounts.get(accountId)
  }
  putAccount(account: AccountRecord): void {
    this.#dbs.accounts.put(account.accountId, account)
    this.#dbs.wallets.put(account.wallet, account.accountId)
  }

  penalty(key: string): PenaltyRecord | undefined {
    return this.#dbs.penalties.get(key)
  }
  putPenalty(key: string, penalty: PenaltyRecord): void {
    this.#dbs.penalties.put(key, penalty)
  }

  /** Add `delta` to the totals stored under `key` (see usageKey()). */
  addUsage(key: string, delta: Partial<UsageTotals>): void {
    const row = this.#dbs.usage.get(key) ?? emptyUsage()
    this.#dbs.usage.put(key, {
      requests: row.requests + (delta.requests ?? 0),
      errors: row.errors + (delta.errors ?? 0),
      bytesIn: row.bytesIn + (delta.bytesIn ?? 0),
      bytesOut: row.bytesOut + (delta.bytesOut ?? 0),
      rateLimited: row.rateLimited + (delta.rateLimited ?? 0),
      // Rows written before notifications were counted have no such field.
      notifications: (row.notifications ?? 0) + (delta.notifications ?? 0),
    })
  }

  session(sessionHash: string): SessionRecord | undefined {
    return this.#dbs.sessions.get(sessionHash)
  }
  putSession(sessionHash: string, session: SessionRecord): void {
    this.#dbs.sessions.put(sessionHash, session)
  }
  removeSession(sessionHash: string): void {
    this.#dbs.sessions.remove(sessionHash)
  }

  claim(key: string): ClaimRecord | undefined {
    return this.#dbs.claims.get(key)
  }
  /** Record the claim unless one is there: true when this one is the first (it won). */
  claimFirst(key: string, claim: ClaimRecord): boolean {
    if (this.#dbs.claims.get(key) !== undefined) return false
    this.#dbs.claims.put(key, claim)
    return true
  }

  /** Set (or replace) a claim: for markers that are not first-wins, such as a pending activation. */
  putClaim(key: string, claim: ClaimRecord): void {
    this.#dbs.claims.put(key, claim)
  }
  removeClaim(key: string): void {
    this.#dbs.claims.remove(key)
  }

  invoice(invoiceId: string): InvoiceRecord | undefined {
    return this.#dbs.invoices.get(invoiceId)
  }
  putInvoice(invoice: InvoiceRecord): void {
    this.#dbs.invoices.put(invoice.invoiceId, invoice)
    this.#dbs.invoicesByAccount.put(accountInvoiceKey(invoice.accountId, invoice.createdAt, invoice.invoiceId), invoice.invoiceId)
  }

  privateNode(accountId: string): PrivateNodeRecord | undefined {
    return this.#dbs.privateNodes.get(accountId)
  }
  putPrivateNode(record: PrivateNodeRecord): void {
    this.#dbs.privateNodes.put(record.accountId, record)
  }

  /** Add calls to one hourly bucket (see hourlyUsageKey()). */
  addHourlyUsage(key: string, requests: number, errors: number): void {
    const row = this.#dbs.usageHourly.get(key)
    this.#dbs.usageHourly.put(key, { requests: (row?.requests ?? 0) + requests, errors: (row?.errors ?? 0) + errors })
  }

  /**
   * Marks a usage event id as counted; false when it already was. The log dedups ids, but only
   * within JetStream's duplicate window: an outbox that re-sends after a long outage stores the
   * same fact at a second seq, and without this guard its usage would be counted twice.
   */
  markUsageCounted(eventId: string, intervalStart: number): boolean {
    if (this.#dbs.usageEvents.get(eventId) !== undefined) return false
    this.#dbs.usageEvents.put(eventId, intervalStart)
    return true
  }
}
