import type { Database } from 'lmdb'
import { sessionOrder } from './session-order.js'
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

/** The named dbs of the state store (see StateStore). */
export interface StateDbs {
  keys: Database<KeyRecord, string>
  keyIds: Database<string, string>
  accounts: Database<AccountRecord, string>
  wallets: Database<string, string>
  usage: Database<UsageTotals, string>
  /** usageEventKey() → producer: ids of usage events counted in the last minutes of event time (see usage/usage-dedup.ts). */
  usageEvents: Database<string, string>
  /** producer → the newest intervalStart of it that left the id window (see usage/usage-dedup.ts). */
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

/** The dbs as one write transaction sees them: reads see its own writes, kept in memory until flush(). */
export type StateTables = { [K in keyof StateDbs]: StateDbs[K] extends Database<infer V, string> ? BufferedTable<V> : never }

/**
 * A part of the state that a folder of its own keeps over the writer's tables (usage/: its
 * dedup and rows), with what it holds in memory during a transaction: written into the
 * transaction by flush() before the tables are, forgotten by reset() when the transaction ends.
 */
export interface WriterPart {
  flush(): void
  reset(): void
}

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
  /** Parts by the function that opened them, in the order they were first used (see part()). */
  readonly #parts = new Map<(tables: StateTables) => WriterPart, WriterPart>()
  constructor(dbs: StateDbs) {
    const tables: Record<string, BufferedTable<unknown>> = {}
    for (const [name, db] of Object.entries(dbs)) tables[name] = new BufferedTable(db as Database<unknown, string>)
    this.#t = tables as StateTables
  }

  /**
   * The part that `open` makes over this writer's tables, made on first use and kept with the
   * writer (one per store): its flush and reset follow each transaction. `open` must be one
   * function for the life of the process (a module's export), since it is the part's name.
   */
  part<P extends WriterPart>(open: (tables: StateTables) => P): P {
    let part = this.#parts.get(open) as P | undefined
    if (part === undefined) {
      part = open(this.#t)
      this.#parts.set(open, part)
    }
    return part
  }

  /** Write everything pending into the transaction (StateStore.write, before it commits). */
  flush(): void {
    for (const part of this.#parts.values()) part.flush()
    for (const table of Object.values(this.#t)) table.flush()
    this.#endTransaction()
  }

  /** Forget everything pending (the transaction aborts). */
  discard(): void {
    for (const table of Object.values(this.#t)) table.discard()
    this.#endTransaction()
  }

  #endTransaction(): void {
    for (const part of this.#parts.values()) part.reset()
  }

  /** The last seq applied (0: nothing yet). */
  checkpoint(): number {
    return this.metaValue(CHECKPOINT) ?? 0
  }
  setCheckpoint(seq: number): void {
    this.setMetaValue(CHECKPOINT, seq)
  }

  /** A figure of the store's own (`meta`: a usage partition's checkpoint, the usage mode), as this transaction sees it. */
  metaValue(name: string): number | undefined {
    return this.#t.meta.get(name)
  }
  setMetaValue(name: string, value: number): void {
    this.#t.meta.put(name, value)
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
}
