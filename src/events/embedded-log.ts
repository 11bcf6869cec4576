import { open, type Database, type RootDatabase } from 'lmdb'
import { decodeEvent, encodeEvent } from './codec.js'
import { EventBatch } from './event-batch.js'
import { READ_ALL_DEFAULTS, type AccountStream, type EventLog, type LogFollower, type ReadAllOptions } from './log.js'
import { EventLogUnavailable, WrongExpectedVersion } from './errors.js'
import { FollowLoop, FollowerSet } from './follow-loop.js'
import { categoryOf, type StoredEvent, type TollgateEvent } from './types.js'

/** Meta key: the last seq indexed in the account index. */
const INDEXED = 'indexed'
/** How often a follower that is caught up looks for appends made by other processes. */
const POLL_MS = 50
/** Most events handed to one onBatch call. */
const FOLLOW_BATCH = 1000

/**
 * The event log embedded in LMDB, for a single machine without NATS. Values are the codec's
 * msgpack bytes under integer keys (seq from 1); an id→seq index makes a re-sent event a no-op.
 *
 * Several processes may open the same path (the CLI appends while the gateway follows): the
 * next seq is read and written inside one LMDB write transaction, which LMDB serializes across
 * processes, so two writers can never take the same seq or leave a gap.
 * @example
 * const log = EmbeddedLog.open(join(dataDir, 'log'))
 * await log.append([event])
 */
export class EmbeddedLog implements EventLog {
  /** One file, one order: usage partitions mean nothing here (events.partitions > 1 needs events.nats). */
  readonly partitions: readonly EventLog[] = []
  readonly kind = 'embedded' as const
  readonly #env: RootDatabase
  readonly #events: Database<Buffer, number>
  readonly #ids: Database<number, string>
  /** [accountId, seq] of every event of an account's own stream (see subjectOf): its index. */
  readonly #accounts: Database<null, [string, number]>
  /** 'indexed': the last seq whose account event is in #accounts (older logs had no index). */
  readonly #meta: Database<number, string>
  readonly #followers = new FollowerSet()
  #closed = false

  get connected(): boolean {
    return !this.#closed
  }

  private constructor(env: RootDatabase) {
    this.#env = env
    this.#events = env.openDB<Buffer, number>({ name: 'events', encoding: 'binary' })
    this.#ids = env.openDB<number, string>({ name: 'ids', encoding: 'ordered-binary' })
    this.#accounts = env.openDB<null, [string, number]>({ name: 'accounts', encoding: 'ordered-binary' })
    this.#meta = env.openDB<number, string>({ name: 'meta', encoding: 'ordered-binary' })
  }

  /** Open (or create) the log at `path`, a directory of its own. */
  static open(path: string): EmbeddedLog {
    const log = new EmbeddedLog(open({ path, maxDbs: 8 }))
    log.#indexOlderEvents()
    return log
  }

  async append(events: readonly TollgateEvent[]): Promise<void> {
    await this.#write(events, undefined)
  }

  async appendToAccount(accountId: string, events: readonly TollgateEvent[], expectedVersion: number): Promise<number> {
    return this.#write(events, { accountId, expectedVersion })
  }

  async readAccount(accountId: string, after = 0): Promise<AccountStream> {
    this.#assertOpen()
    const events: StoredEvent[] = []
    for (const [, seq] of this.#accounts.getKeys({ start: [accountId, after + 1], end: [accountId, Number.MAX_SAFE_INTEGER] })) {
      events.push({ seq, event: decodeEvent(this.#events.get(seq)!) })
    }
    return { events, version: events.at(-1)?.seq ?? after }
  }

  /** Append (once per id), checking the account's version first when `expect` says so; resolves with it after. */
  async #write(events: readonly TollgateEvent[], expect: { accountId: string; expectedVersion: number } | undefined): Promise<number> {
    this.#assertOpen()
    // Encode before the transaction: the write lock is shared with other processes.
    const encoded = events.map((event) => ({ event, bytes: Buffer.from(encodeEvent(event)) }))
    let version = 0
    try {
      await this.#env.transaction(() => {
        if (expect !== undefined) {
          version = this.#versionNow(expect.accountId)
          if (version !== expect.expectedVersion) throw new WrongExpectedVersion(expect.accountId, expect.expectedVersion)
        }
        let seq = this.#lastSeqNow()
        const seen = new Set<string>()
        for (const { event, bytes } of encoded) {
          if (seen.has(event.id) || this.#ids.get(event.id) !== undefined) continue
          seen.add(event.id)
          seq += 1
          this.#events.put(seq, bytes)
          this.#ids.put(event.id, seq)
          if (categoryOf(event.type) === 'accounts' && 'accountId' in event) {
            this.#accounts.put([event.accountId, seq], null)
            if (event.accountId === expect?.accountId) version = seq
          }
        }
        this.#meta.put(INDEXED, seq)
      })
    } catch (cause) {
      if (cause instanceof WrongExpectedVersion) throw cause
      throw new EventLogUnavailable('embedded log: write failed', { cause })
    }
    if (events.length > 0) this.#followers.wakeAll()
    return version
  }

  #versionNow(accountId: string): number {
    for (const [, seq] of this.#accounts.getKeys({ start: [accountId, Number.MAX_SAFE_INTEGER], end: [accountId, 0], reverse: true, limit: 1 })) return seq
    return 0
  }

  /** A log written before the account index: index its account events once, at open. */
  #indexOlderEvents(): void {
    const indexed = this.#meta.get(INDEXED) ?? 0
    const last = this.#lastSeqNow()
    if (indexed >= last) return
    this.#env.transactionSync(() => {
      for (const { key, value } of this.#events.getRange({ start: indexed + 1 })) {
        const event = decodeEvent(value)
        if (categoryOf(event.type) === 'accounts' && 'accountId' in event) this.#accounts.put([event.accountId, key], null)
      }
      this.#meta.put(INDEXED, last)
    })
  }

  async read(from: number, limit: number): Promise<StoredEvent[]> {
    this.#assertOpen()
    this.#latestSnapshot()
    return this.#readNow(from, limit)
  }

  async lastSeq(): Promise<number> {
    this.#assertOpen()
    this.#latestSnapshot()
    return this.#lastSeqNow()
  }

  async readAll(from: number, onBatch: (batch: EventBatch) => Promise<void> | void, opts: ReadAllOptions = {}): Promise<number> {
    this.#assertOpen()
    this.#latestSnapshot()
    const to = opts.to ?? this.#lastSeqNow()
    const batch = opts.batch ?? READ_ALL_DEFAULTS.batch
    let next = Math.max(1, from)
    while (next <= to) {
      this.#assertOpen()
      const events = new EventBatch()
      for (const { key, value } of this.#events.getRange({ start: next, limit: Math.min(batch, to - next + 1) })) events.push(key, value)
      if (events.length === 0) break
      await onBatch(events)
      next = events.lastSeq! + 1
    }
    return next - 1
  }

  follow(from: number, onBatch: (batch: StoredEvent[]) => Promise<void>): LogFollower {
    this.#assertOpen()
    const loop = new FollowLoop({
      from,
      onBatch,
      read: async (next) => {
        this.#latestSnapshot()
        return this.#readNow(next, FOLLOW_BATCH)
      },
      // Other processes' appends are only seen by looking: a short poll when idle.
      idleWaitMs: POLL_MS,
    })
    return this.#followers.start(loop)
  }

  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    await this.#followers.stopAll()
    await this.#env.close()
  }

  #readNow(from: number, limit: number): StoredEvent[] {
    const out: StoredEvent[] = []
    if (limit <= 0) return out
    for (const { key, value } of this.#events.getRange({ start: Math.max(1, from), limit })) {
      out.push({ seq: key, event: decodeEvent(value) })
    }
    return out
  }

  /**
   * Read from the latest committed snapshot. lmdb-js renews its read transaction after this
   * instance's own writes and on a new event turn, but not after another instance's or process's
   * write: read in the same turn as such an append (a test awaiting it, then asking) it could
   * still see the log without it, and "another instance sees appends at once" failed on CI.
   */
  #latestSnapshot(): void {
    this.#env.resetReadTxn()
  }

  #lastSeqNow(): number {
    for (const key of this.#events.getKeys({ reverse: true, limit: 1 })) return key
    return 0
  }

  #assertOpen(): void {
    if (this.#closed) throw new EventLogUnavailable('embedded log is closed')
  }
}
