import { open, type Database, type RootDatabase } from 'lmdb'
import { decodeEvent, encodeEvent } from './codec.js'
import { EventLogUnavailable, type EventLog, type LogFollower } from './log.js'
import { FollowLoop, FollowerSet } from './follow-loop.js'
import type { StoredEvent, TollgateEvent } from './types.js'

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
  readonly kind = 'embedded' as const
  readonly #env: RootDatabase
  readonly #events: Database<Buffer, number>
  readonly #ids: Database<number, string>
  readonly #followers = new FollowerSet()
  #closed = false

  private constructor(env: RootDatabase) {
    this.#env = env
    this.#events = env.openDB<Buffer, number>({ name: 'events', encoding: 'binary' })
    this.#ids = env.openDB<number, string>({ name: 'ids', encoding: 'ordered-binary' })
  }

  /** Open (or create) the log at `path`, a directory of its own. */
  static open(path: string): EmbeddedLog {
    return new EmbeddedLog(open({ path, maxDbs: 4 }))
  }

  async append(events: readonly TollgateEvent[]): Promise<void> {
    this.#assertOpen()
    if (events.length === 0) return
    // Encode before the transaction: the write lock is shared with other processes.
    const encoded = events.map((event) => ({ id: event.id, bytes: Buffer.from(encodeEvent(event)) }))
    try {
      await this.#env.transaction(() => {
        let seq = this.#lastSeqNow()
        const seen = new Set<string>()
        for (const { id, bytes } of encoded) {
          if (seen.has(id) || this.#ids.get(id) !== undefined) continue
          seen.add(id)
          seq += 1
          this.#events.put(seq, bytes)
          this.#ids.put(id, seq)
        }
      })
    } catch (cause) {
      throw new EventLogUnavailable('embedded log: write failed', { cause })
    }
    this.#followers.wakeAll()
  }

  async read(from: number, limit: number): Promise<StoredEvent[]> {
    this.#assertOpen()
    return this.#readNow(from, limit)
  }

  async lastSeq(): Promise<number> {
    this.#assertOpen()
    return this.#lastSeqNow()
  }

  follow(from: number, onBatch: (batch: StoredEvent[]) => Promise<void>): LogFollower {
    this.#assertOpen()
    const loop = new FollowLoop({
      from,
      onBatch,
      read: async (next) => this.#readNow(next, FOLLOW_BATCH),
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

  #lastSeqNow(): number {
    for (const key of this.#events.getKeys({ reverse: true, limit: 1 })) return key
    return 0
  }

  #assertOpen(): void {
    if (this.#closed) throw new EventLogUnavailable('embedded log is closed')
  }
}
