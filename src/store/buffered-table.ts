import type { Database, RangeOptions } from 'lmdb'

/** Marks a key removed in a table's pending writes. */
const REMOVED = Symbol('removed')
/** put()'s options for a key after every key of the db. */
const APPEND = Object.freeze({ append: true })
/**
 * lmdb-js's put() with options (its types leave them out; lmdb 3.5 takes them as the third
 * argument), inside a synchronous transaction: it returns a settled promise whose `result` says
 * whether it was written.
 */
type PutWithOptions<V> = (key: string, value: V, options: { append: boolean }) => Promise<boolean> & { result?: boolean }

/**
 * One LMDB db seen through the writes of the transaction in progress, kept in memory until
 * flush(): a record that a batch of events changes many times (an account's usage totals, a key's
 * hour) is read from LMDB once and written once per transaction instead of once per event, and a
 * record written and removed within one transaction (a usage id that leaves its window) never
 * reaches LMDB. Reads and writes of LMDB were most of replay's time (a profile of 100,000 events:
 * 40% in lmdb-js get, put and commit).
 *
 * Only for use inside one write transaction (StateWriter): flush() before the commit, discard()
 * when it aborts.
 */
export class BufferedTable<V> {
  readonly #db: Database<V, string>
  readonly #pending = new Map<string, V | typeof REMOVED>()
  /** Pending keys that LMDB does not hold (see putNew): removing them needs no LMDB write. */
  readonly #unstored = new Set<string>()
  /** What LMDB answered for keys read and not written in this transaction (undefined: it holds none). */
  readonly #read = new Map<string, V | undefined>()
  /**
   * Whether range() or keys() wrote this transaction's writes into LMDB before its end: LMDB may
   * then hold keys that it lacked when the transaction began (see getPending).
   */
  #wroteThrough = false

  constructor(db: Database<V, string>) {
    this.#db = db
  }

  get(key: string): V | undefined {
    const pending = this.#pending.get(key)
    if (pending !== undefined) return pending === REMOVED ? undefined : pending
    if (this.#read.has(key)) return this.#read.get(key)
    const value = this.#db.get(key)
    this.#read.set(key, value)
    return value
  }

  /**
   * What this transaction wrote under `key`, without asking LMDB: for a key the caller knows LMDB
   * lacked when the transaction began. Once range() or keys() has written the transaction's writes
   * through, LMDB is asked after all: a usage row of the hour before, written through when the
   * next hour folded the window, would otherwise be replaced by a late interval of that hour
   * instead of added to (the state then depended on where transactions began).
   */
  getPending(key: string): V | undefined {
    if (this.#wroteThrough) return this.get(key)
    const pending = this.#pending.get(key)
    return pending === REMOVED ? undefined : pending
  }

  /** The value LMDB holds, this transaction's writes left out. */
  getCommitted(key: string): V | undefined {
    return this.#db.get(key)
  }

  put(key: string, value: V): void {
    this.#pending.set(key, value)
  }

  /** put() of a key that the caller knows LMDB does not hold (see getPending). */
  putNew(key: string, value: V): void {
    if (!this.#pending.has(key)) this.#unstored.add(key)
    this.#pending.set(key, value)
  }

  remove(key: string): void {
    if (this.#unstored.delete(key)) this.#pending.delete(key)
    else this.#pending.set(key, REMOVED)
  }

  /** Entries in key order, this transaction's writes included (they are written first). */
  range(options: RangeOptions): Iterable<{ key: string; value: V }> {
    this.#writeThrough()
    return this.#db.getRange(options)
  }

  /** Keys in key order, this transaction's writes included (they are written first). */
  keys(options: RangeOptions): Iterable<string> {
    this.#writeThrough()
    return this.#db.getKeys(options)
  }

  /** Entries in key order as LMDB holds them, this transaction's writes left out. */
  committed(options: RangeOptions): Iterable<{ key: string; value: V }> {
    return this.#db.getRange(options)
  }

  /**
   * Write what is pending into the transaction now, to hold fewer writes in memory, for a caller
   * that knows which keys it wrote out: unlike range(), getPending() keeps answering from this
   * transaction's writes alone, so the caller must ask get() for a key it may have written out.
   */
  writeOut(): void {
    this.#write()
  }

  /** Write what is pending into the transaction as it ends (StateWriter.flush). */
  flush(): void {
    this.#write()
    this.#wroteThrough = false
  }

  #writeThrough(): void {
    this.#write()
    this.#wroteThrough = true
  }

  /**
   * Write what is pending into the transaction, in key order (fewer B-tree pages touched than in
   * event order); the keys after the last one the db holds are appended (LMDB's MDB_APPEND).
   * Why: the tables keyed by time first (a key's hour, a usage id's interval) get their rows after
   * every row they hold, and an append puts them at the end of the last page without a search
   * and fills pages instead of splitting them in halves: 280,000 hour rows in transactions of
   * fourteen hours were put in 2.9-3.2 s appended against 3.4-3.6 s (lmdb 3.5, a loaded machine).
   */
  #write(): void {
    this.#read.clear()
    if (this.#pending.size === 0) return
    const keys = [...this.#pending.keys()].sort()
    const last = this.#lastKey()
    // String order is LMDB's order of these keys as long as they are ASCII, and an append out of
    // order is refused by LMDB (the put then fails, and is made again as a plain put below).
    let i = 0
    for (; i < keys.length; i++) {
      const key = keys[i]!
      if (last === undefined || key > last) break
      const value = this.#pending.get(key)!
      if (value === REMOVED) this.#db.remove(key)
      else this.#db.put(key, value)
    }
    for (; i < keys.length; i++) {
      const key = keys[i]!
      const value = this.#pending.get(key)!
      if (value === REMOVED) continue // a key after every key the db holds is not in it
      if ((this.#db.put as PutWithOptions<V>).call(this.#db, key, value, APPEND).result === false) this.#db.put(key, value)
    }
    this.#pending.clear()
    this.#unstored.clear()
  }

  /** The db's last key, this transaction's writes included (undefined: it is empty). */
  #lastKey(): string | undefined {
    for (const key of this.#db.getKeys({ reverse: true, limit: 1 })) return key
    return undefined
  }

  /** Forget what is pending and what was read (the transaction aborts). */
  discard(): void {
    this.#wroteThrough = false
    this.#pending.clear()
    this.#unstored.clear()
    this.#read.clear()
  }
}
