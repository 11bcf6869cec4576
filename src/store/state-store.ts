import { mkdirSync } from 'node:fs'
import { open, TransactionFlags, type Database, type RootDatabase } from 'lmdb'
import type { AccountRecord, ClaimRecord, InvoiceRecord, KeyRecord, PenaltyRecord, PrivateNodeRecord, SessionRecord, WsBlocks } from './records.js'
import { USAGE_NEWEST, usageEventKey, wsCooldownKey, wsPenaltyKey } from './records.js'
import { LAYOUT_VERSION, StateWriter, type StateDbs } from './state-writer.js'
import { StateStoreClosed } from './errors.js'

const ABORTABLE_COMMIT_NO_FLUSH: TransactionFlags = TransactionFlags.ABORTABLE | TransactionFlags.SYNCHRONOUS_COMMIT | TransactionFlags.NO_SYNC_FLUSH

/** Names of the dbs in the store, in the order the digest walks them. */
export const STATE_DB_NAMES = [
  'accounts',
  'keyIds',
  'keys',
  'meta',
  'penalties',
  'usage',
  'usageEvents',
  'wallets',
  'claims',
  'invoices',
  'invoicesByAccount',
  'privateNodes',
  'sessions',
  'usageHourly',
  'keyUsageFolded',
  'keyUsageHours',
  'sessionsByAccount',
  'usageProducers',
] as const
export type StateDbName = (typeof STATE_DB_NAMES)[number]

/**
 * The layout of the read models. A store written by an older layout lacks what was added since
 * (2: usage per key and hour) for the events it applied then: readers of the new parts check
 * version() and ask for a replay, rather than answer from half a table. (3: usage ids keyed by
 * their interval, converted at open.)
 */
export const STATE_VERSION = 3
const VERSION = LAYOUT_VERSION
/**
 * Address space mapped for the store's file from the start. Left to lmdb-js, the map starts
 * small and is mapped anew each time the file outgrows it, and the earlier maps stay mapped with
 * the pages read through them: a replay of a week of usage (a 105 MiB file) held 207 MiB of the
 * file resident, five maps' worth. Only the file's used pages count, on disk (it grows as it
 * fills, never to this size) and in memory; a store larger than this is mapped anew as before.
 */
const STATE_MAP_BYTES = 8 * 1024 ** 3
const CHECKPOINT_KEY = 'checkpoint'
/** meta: a replay wiped the store and has not finished (see wipe()). */
const REPLAYING = 'replaying'

export type { AccountRecord, KeyRecord, PenaltyRecord, PlanState, UsageFilter, UsageRow, UsageTotals, WsBlocks } from './records.js'
export { isKeyActive, usageKey } from './records.js'
export type { StateWriter } from './state-writer.js'

/**
 * The projected state in one LMDB environment (a folder holding data.mdb and lock.mdb), msgpack
 * values, one named db per kind of record. Everything in it is derived from the event log:
 * delete the folder and replay, and the state is the same (compare stateDigest()).
 *
 * Getters are synchronous and cheap (an LMDB read is about a microsecond) so that the request
 * path can call them directly; writes go through write(), one transaction per projection batch.
 * Several processes may open the same folder (the CLI beside a running gateway): LMDB serialises
 * their write transactions and the projector's checkpoint test makes a second apply a no-op.
 * @example
 * const store = StateStore.open(join(dataDir, 'state'))
 * const key = store.keyByHash(hashApiKey(apiKey))
 */
export class StateStore {
  readonly path: string
  readonly #root: RootDatabase
  readonly #dbs: StateDbs
  readonly #writer: StateWriter
  #closed = false

  private constructor(path: string, root: RootDatabase) {
    this.path = path
    this.#root = root
    const db = <V>(name: StateDbName) => root.openDB<V, string>(name, { encoding: 'msgpack' })
    this.#dbs = {
      keys: db('keys'),
      keyIds: db('keyIds'),
      accounts: db('accounts'),
      wallets: db('wallets'),
      usage: db('usage'),
      usageEvents: db('usageEvents'),
      usageProducers: db('usageProducers'),
      meta: db('meta'),
      penalties: db('penalties'),
      sessions: db('sessions'),
      sessionsByAccount: db('sessionsByAccount'),
      claims: db('claims'),
      invoices: db('invoices'),
      invoicesByAccount: db('invoicesByAccount'),
      privateNodes: db('privateNodes'),
      usageHourly: db('usageHourly'),
      keyUsageHours: db('keyUsageHours'),
      keyUsageFolded: db('keyUsageFolded'),
    }
    this.#writer = new StateWriter(this.#dbs)
  }

  /** Open (creating it if needed) the store in folder `path`. */
  static open(path: string): StateStore {
    let store: StateStore
    try {
      mkdirSync(path, { recursive: true })
      store = new StateStore(path, open({ path, maxDbs: 32, mapSize: STATE_MAP_BYTES }))
    } catch (cause) {
      throw new StateStoreClosed(`cannot open the state store at ${path}: ${(cause as Error).message}`, { cause })
    }
    // A store that has applied nothing is built by this layout from its first event on.
    if (store.#dbs.meta.get(CHECKPOINT_KEY) === undefined && store.#dbs.meta.get(VERSION) === undefined) {
      store.#dbs.meta.putSync(VERSION, STATE_VERSION) // not transactionSync: that blocks a second open of the folder in this process
    }
    store.#keyUsageIdsByInterval()
    return store
  }

  /**
   * Layout 2 kept every usage id ever counted under the id alone (id → intervalStart): rewrite
   * them keyed by their interval, which the window of ids (UsageDedup) prunes. Their producer is
   * unknown, so when they leave the window no watermark takes them over: an event of before the
   * upgrade sent again over an hour later would count again (JetStream drops it within 10 minutes).
   */
  #keyUsageIdsByInterval(): void {
    const events = this.#dbs.usageEvents as unknown as Database<string | number, string>
    let last: string | undefined
    for (const key of events.getKeys({ reverse: true, limit: 1 })) last = key
    if (last === undefined || /^\d/.test(last)) return
    this.#root.transactionSync(() => {
      let newest = this.#dbs.meta.get(USAGE_NEWEST) ?? -Infinity
      for (const { key, value } of events.getRange({ start: 'A' })) {
        if (typeof value !== 'number') continue
        events.remove(key)
        events.put(usageEventKey(value, key), '')
        newest = Math.max(newest, value)
      }
      // The window of ids ends at the newest one (and UsageDedup relies on no id being newer).
      if (Number.isFinite(newest)) this.#dbs.meta.put(USAGE_NEWEST, newest)
      if (this.#dbs.meta.get(VERSION) === 2) this.#dbs.meta.put(VERSION, STATE_VERSION)
    })
  }

  /** The layout the store was built by (see STATE_VERSION); 1: before versions were written. */
  version(): number {
    return this.#dbs.meta.get(VERSION) ?? 1
  }

  /** The key record for a key hash (hex SHA-256 of the API key), revoked ones included. */
  keyByHash(keyHash: string): KeyRecord | undefined {
    return this.#dbs.keys.get(keyHash)
  }

  /** The key hash of a public key id (what the key directory holds its contexts under). */
  keyHashById(keyId: string): string | undefined {
    return this.#dbs.keyIds.get(keyId)
  }

  /** The key record for a public key id. */
  keyById(keyId: string): KeyRecord | undefined {
    const hash = this.#dbs.keyIds.get(keyId)
    return hash === undefined ? undefined : this.#dbs.keys.get(hash)
  }

  account(accountId: string): AccountRecord | undefined {
    return this.#dbs.accounts.get(accountId)
  }

  /** The account of a wallet; the address is matched case-insensitively. */
  accountByWallet(wallet: string): AccountRecord | undefined {
    const id = this.#dbs.wallets.get(wallet.toLowerCase())
    return id === undefined ? undefined : this.#dbs.accounts.get(id)
  }

  /** A dashboard session by the hash of its token (expired ones included: check expiresAt). */
  session(sessionHash: string): SessionRecord | undefined {
    return this.#dbs.sessions.get(sessionHash)
  }

  /** The first of competing facts under a claim key (see ClaimRecord). */
  claim(key: string): ClaimRecord | undefined {
    return this.#dbs.claims.get(key)
  }

  invoice(invoiceId: string): InvoiceRecord | undefined {
    return this.#dbs.invoices.get(invoiceId)
  }

  /** An account's invoices, newest first, at most `limit`. */
  invoicesOf(accountId: string, limit = 20): InvoiceRecord[] {
    const out: InvoiceRecord[] = []
    for (const id of this.#dbs.invoicesByAccount.getRange({ start: `${accountId}}`, end: `${accountId}|`, reverse: true, limit }).map((e) => e.value)) {
      const invoice = this.#dbs.invoices.get(id)
      if (invoice) out.push(invoice)
    }
    return out
  }

  /** The penalty stored under `key` (`ip:<address>`…), lifted or not. */
  penalty(key: string): PenaltyRecord | undefined {
    return this.#dbs.penalties.get(key)
  }

  /** The WebSocket cooldown and penalty of a key, from the `penalties` db; undefined when it never had either. */
  wsBlocks(keyId: string): WsBlocks | undefined {
    const cooldown = this.#dbs.penalties.get(wsCooldownKey(keyId))
    const penalty = this.#dbs.penalties.get(wsPenaltyKey(keyId))
    if (cooldown === undefined && penalty === undefined) return undefined
    return { cooldownUntil: cooldown?.until ?? 0, penaltyUntil: penalty?.until ?? 0 }
  }

  /** Penalties whose key starts with `prefix` and that are still in force at `now`. */
  penaltiesInForce(prefix: string, now: number): Array<{ key: string; penalty: PenaltyRecord }> {
    const out: Array<{ key: string; penalty: PenaltyRecord }> = []
    for (const { key, value } of this.#dbs.penalties.getRange({ start: prefix })) {
      if (!key.startsWith(prefix)) break
      if (value.until > now) out.push({ key, penalty: value })
    }
    return out
  }

  privateNode(accountId: string): PrivateNodeRecord | undefined {
    return this.#dbs.privateNodes.get(accountId)
  }

  /** The last event seq applied to this store (0: none). */
  checkpoint(): number {
    return this.#dbs.meta.get(CHECKPOINT_KEY) ?? 0
  }

  /**
   * One db, for reading: for the folders that keep a part of the layout themselves (usage/,
   * whose queries read its tables). Reads see the last commit.
   */
  table<N extends StateDbName>(name: N): StateDbs[N] {
    return this.#dbs[name]
  }

  /**
   * Run `fn` inside one write transaction and commit it; if `fn` throws, nothing it wrote is
   * committed and the error is rethrown.
   *
   * Synchronous on purpose: lmdb-js's asynchronous transaction() commits whatever the callback
   * wrote even when it throws (checked with lmdb 3.5), so a projection failing mid-batch would
   * leave half a batch without its checkpoint and the retry would count usage twice. The commit
   * returns before the fsync (NO_SYNC_FLUSH with LMDB's overlapping sync), so the event loop
   * only pays for the page writes: a power cut may lose the last batches, data and checkpoint
   * together, and the projector then re-applies them from the log.
   */
  write<T>(fn: (writer: StateWriter) => T): T {
    if (this.#closed) throw new StateStoreClosed(`the state store at ${this.path} is closed`)
    return this.#root.transactionSync(() => {
      try {
        const out = fn(this.#writer)
        this.#writer.flush()
        return out
      } catch (err) {
        this.#writer.discard()
        throw err
      }
    }, ABORTABLE_COMMIT_NO_FLUSH)
  }

  /**
   * Remove every record and reset the checkpoint to 0, in one transaction (a crash leaves all or
   * nothing), for a replay: the store is marked as being replayed until replayDone(). What is
   * applied next is built by the current layout.
   */
  wipe(): void {
    this.#root.transactionSync(() => {
      for (const name of STATE_DB_NAMES) this.#dbs[name].clearSync()
      this.#dbs.meta.put(VERSION, STATE_VERSION)
      this.#dbs.meta.put(REPLAYING, 1)
    })
  }

  /** Whether a replay began on this store and has not finished (it can be resumed from the checkpoint). */
  replaying(): boolean {
    return this.#dbs.meta.get(REPLAYING) !== undefined
  }

  /** The replay that wiped the store has applied the whole log. */
  replayDone(): void {
    this.#dbs.meta.removeSync(REPLAYING)
  }

  /** Every entry of every db, db by db in STATE_DB_NAMES order, keys in order (what stateDigest() hashes). */
  *entries(): Generator<{ db: StateDbName; key: string; value: unknown }> {
    for (const name of STATE_DB_NAMES) {
      const db = this.#dbs[name] as StateDbs[StateDbName]
      for (const { key, value } of db.getRange({})) yield { db: name, key, value }
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    await this.#root.close()
  }
}
