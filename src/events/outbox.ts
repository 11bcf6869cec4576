import { open, type Database, type RootDatabase } from 'lmdb'
import { decodeEvent, encodeEvent } from './codec.js'
import type { EventLog } from './log.js'
import type { TollgateEvent } from './types.js'
import { OutboxFlushTimeout, OutboxClosed } from './errors.js'

export interface OutboxOptions {
  /** First pause before retrying an append the log refused, in ms (default 200); doubles on each failure. */
  retryMs?: number
  /**
   * Longest pause between retries, in ms (default 1,000). A retry is cheap: it fails at once while
   * NATS is disconnected, and while NATS is connected but the stream has no leader it is one event
   * (a probe) waiting for its time-out; so a quorum that comes back is used within about a second.
   */
  maxRetryMs?: number
  /** Most events per append (default 500). */
  batchSize?: number
  /**
   * How long events the log acknowledged are kept, in ms, to be sent again after a disruption
   * (default 120,000; 0 keeps none). Must stay well inside the stream's duplicate window
   * (DUPLICATE_WINDOW_MS, 10 minutes on a stream Tollgate creates), where JetStream drops a
   * re-sent event it still holds as a duplicate: only what it lost is stored again.
   */
  resendWindowMs?: number
  /** Most acknowledged events kept for that (default 100,000, the oldest go first): bounds the disk and a resend's burst. */
  resendMax?: number
  /** The clock that dates acknowledgements (default Date.now); tests move it. */
  now?: () => number
  /** Told about every failure (a refused append, a local write error); the outbox keeps going. */
  onError?: (err: unknown) => void
  /** Told when kept events were sent again after a disruption, with how many (for the log). */
  onResent?: (count: number) => void
}

interface Queued {
  key: number
  event: TollgateEvent
  /** The event as stored on disk, kept after the acknowledgement without encoding it again. */
  bytes: Uint8Array
}

/** Acknowledged events kept for a resend: consecutive entries of the `sent` database acknowledged at one time. */
interface KeptRun {
  /** First and last key of the run (keys in between that are missing were never queued). */
  from: number
  to: number
  count: number
  ackedAt: number
}

/** A log that counts its reconnections (JetStreamLog): the servers it reaches again may have lost acknowledged writes. */
interface CountsReconnects {
  readonly reconnects: number
}

/** Bytes before the event in a `sent` entry: when the log acknowledged it (ms, float64). */
const ACKED_AT_BYTES = 8
/** How often the outbox looks for a reconnection and drops kept events past their window. */
const WATCH_MS = 1_000

/**
 * A durable local queue in front of the event log, so that the request path never waits for
 * NATS: publish() writes the events to LMDB without awaiting and returns; a background pump
 * appends them to the log in order and deletes them only once the log acknowledged them. While
 * the log is unavailable they stay on disk and the pump retries with bounded backoff; events
 * still queued when the process stops are sent by the next Outbox opened on the same path.
 *
 * A crash between the log's acknowledgement and the local delete re-sends those events: the
 * deterministic ids make the log store them once. Events whose local write had not committed
 * at a crash (the few ms of lmdb-js's write batching) are lost. One process at a time per path.
 *
 * An acknowledgement is not the end of an event's life here: nats-server can lose what it
 * acknowledged (2.9 fsyncs its store every 2 minutes, so a power cut of a majority of a cluster's
 * machines takes back the writes of those minutes). So acknowledged events are kept for
 * `resendWindowMs` and sent again, oldest first and before anything queued, after any
 * disruption: an append that failed, a reconnection of the log, or this outbox opened again
 * (the process may have stopped with the cluster). The log drops, by id, what it still holds;
 * what it lost is stored again, once.
 * @example
 * const outbox = Outbox.open(join(dataDir, 'outbox'), log, { onError: (err) => logger.warn({ err }) })
 * outbox.publish(decision.events)
 */
export class Outbox {
  readonly #env: RootDatabase
  readonly #db: Database<Buffer, number>
  /** Acknowledged events kept for a resend: key → acknowledgement time (ACKED_AT_BYTES) and the event's bytes. */
  readonly #sent: Database<Buffer, number>
  readonly #log: EventLog
  readonly #retryMs: number
  readonly #maxRetryMs: number
  readonly #batchSize: number
  readonly #resendWindowMs: number
  readonly #resendMax: number
  readonly #now: () => number
  readonly #onError: (err: unknown) => void
  readonly #onResent: (count: number) => void
  /** The durable queue's content, in order, kept in memory so that the pump never reads disk. */
  readonly #queue: Queued[] = []
  readonly #emptyWaiters = new Set<() => void>()
  #nextKey: number
  #pump: Promise<void> | undefined
  #retryTimer: NodeJS.Timeout | undefined
  #retryDelay: number
  #closed = false
  /** What the `sent` database keeps, oldest first, and how many events that is. */
  readonly #kept: KeptRun[] = []
  #keptCount = 0
  /** Resending kept events: the key to go on from (undefined: not resending). */
  #resendFrom: number | undefined
  #resent = 0
  /** The last append failed: the next one is a single event, not a batch that would wait its time-out as a whole. */
  #probe = false
  #reconnects: number | undefined
  #watch: NodeJS.Timeout | undefined

  private constructor(env: RootDatabase, log: EventLog, opts: OutboxOptions) {
    this.#env = env
    this.#db = env.openDB<Buffer, number>({ name: 'outbox', encoding: 'binary' })
    this.#sent = env.openDB<Buffer, number>({ name: 'sent', encoding: 'binary' })
    this.#log = log
    this.#retryMs = opts.retryMs ?? 200
    this.#maxRetryMs = Math.max(this.#retryMs, opts.maxRetryMs ?? 1_000)
    this.#batchSize = opts.batchSize ?? 500
    this.#resendWindowMs = opts.resendWindowMs ?? 120_000
    this.#resendMax = opts.resendMax ?? 100_000
    this.#now = opts.now ?? Date.now
    this.#onError = opts.onError ?? (() => undefined)
    this.#onResent = opts.onResent ?? (() => undefined)
    this.#retryDelay = this.#retryMs
    let last = 0
    for (const { key, value } of this.#sent.getRange()) {
      last = key
      this.#keep(key, value.readDoubleBE(0))
    }
    for (const { key, value } of this.#db.getRange()) {
      last = key
      try {
        const bytes = Buffer.from(value)
        this.#queue.push({ key, event: decodeEvent(bytes), bytes })
      } catch (err) {
        // A corrupt entry would block every event behind it forever: report it and drop it.
        this.#onError(err)
        this.#db.remove(key).catch(this.#onError)
      }
    }
    // Keys go on from the last of either database: a kept event and a queued one never share one.
    this.#nextKey = last + 1
    this.#prune()
    // Opened again: the process may have stopped because the servers did; what it kept goes again.
    this.#disrupted()
    this.#reconnects = reconnectsOf(log)
    if (this.#reconnects !== undefined || this.#resendWindowMs > 0) {
      this.#watch = setInterval(() => this.#look(), WATCH_MS)
      this.#watch.unref()
    }
  }

  /** Open (or create) the outbox at `path`, a directory of its own, and start sending what it holds. */
  static open(path: string, log: EventLog, opts: OutboxOptions = {}): Outbox {
    const outbox = new Outbox(open({ path, maxDbs: 2 }), log, opts)
    outbox.#kick()
    return outbox
  }

  /** Queue events for the log. Never blocks, never throws: failures go to onError. */
  publish(events: readonly TollgateEvent[]): void {
    if (this.#closed) {
      this.#onError(new OutboxClosed(`outbox is closed: ${events.length} event(s) not kept`))
      return
    }
    for (const event of events) {
      try {
        const key = this.#nextKey++
        const bytes = encodeEvent(event)
        // Not awaited: lmdb-js batches the writes of this event turn into one transaction.
        this.#db.put(key, Buffer.from(bytes)).catch(this.#onError)
        this.#queue.push({ key, event, bytes })
      } catch (err) {
        this.#onError(err)
      }
    }
    this.#kick()
  }

  /** Events not yet acknowledged by the log. */
  pending(): number {
    return this.#queue.length
  }

  /** The last append failed (the log is unavailable): true until one succeeds. */
  get failing(): boolean {
    return this.#probe
  }

  /** Acknowledged events kept (within the window) to be sent again after a disruption. */
  kept(): number {
    this.#prune()
    return this.#keptCount
  }

  /**
   * Resolve once every queued event is acknowledged by the log and its local copy deleted, and a
   * resend after a disruption has ended. For shutdown and tests; rejects with OutboxFlushTimeout
   * after `timeoutMs` (default 10 s).
   */
  async flush(timeoutMs = 10_000): Promise<void> {
    if (!this.#idle()) {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          this.#emptyWaiters.delete(done)
          const resending = this.#resendFrom === undefined ? '' : ' (and was sending kept events again)'
          reject(new OutboxFlushTimeout(`outbox still holds ${this.#queue.length} event(s) after ${timeoutMs} ms${resending}`))
        }, timeoutMs)
        const done = (): void => {
          clearTimeout(timer)
          resolve()
        }
        this.#emptyWaiters.add(done)
      })
    }
    await this.#db.committed
  }

  /** Stop sending (after the append in flight settles) and close the local store; queued events stay on disk. */
  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    clearTimeout(this.#retryTimer)
    clearInterval(this.#watch)
    await this.#pump
    await this.#env.close()
  }

  #idle(): boolean {
    return this.#queue.length === 0 && this.#resendFrom === undefined
  }

  #kick(): void {
    if (this.#pump || this.#retryTimer || this.#closed || this.#idle()) return
    this.#pump = this.#drain().finally(() => {
      this.#pump = undefined
      // A publish that came after the loop's last check found the pump still running.
      this.#kick()
    })
  }

  async #drain(): Promise<void> {
    // Let the publishes of this event turn join the first batch.
    await new Promise((resolve) => setImmediate(resolve))
    while (!this.#idle() && !this.#closed) {
      this.#look()
      const limit = this.#probe ? 1 : this.#batchSize
      const resend = this.#resendFrom === undefined ? undefined : this.#keptBatch(this.#resendFrom, limit)
      const batch = resend ?? this.#queue.slice(0, limit)
      if (batch.length === 0) continue // the resend ended (#keptBatch said so)
      try {
        await this.#log.append(batch.map((queued) => queued.event))
      } catch (err) {
        this.#onError(err)
        this.#probe = true
        this.#disrupted()
        this.#scheduleRetry()
        return
      }
      this.#probe = false
      this.#retryDelay = this.#retryMs
      if (resend !== undefined) {
        this.#resendFrom = batch.at(-1)!.key + 1
        this.#resent += batch.length
      } else this.#acknowledged(batch)
    }
    if (this.#idle()) {
      for (const done of this.#emptyWaiters) done()
      this.#emptyWaiters.clear()
    }
  }

  /**
   * Up to `limit` kept events from key `from` on, still inside the window; none: the resend
   * is over (reported, and the queue's turn).
   */
  #keptBatch(from: number, limit: number): Queued[] {
    const oldest = this.#now() - this.#resendWindowMs
    const batch: Queued[] = []
    for (const { key, value } of this.#sent.getRange({ start: from })) {
      // Past the window an id may have left the stream's duplicate window too: sent again, it would be stored twice.
      if (value.readDoubleBE(0) < oldest) continue
      try {
        const bytes = Buffer.from(value.subarray(ACKED_AT_BYTES))
        batch.push({ key, event: decodeEvent(bytes), bytes })
      } catch (err) {
        this.#onError(err)
      }
      if (batch.length >= limit) return batch
    }
    if (batch.length > 0) return batch
    this.#resendFrom = undefined
    if (this.#resent > 0) this.#onResent(this.#resent)
    this.#resent = 0
    return batch
  }

  /** The log acknowledged `batch`: off the queue, into the kept events (or gone, with no window). */
  #acknowledged(batch: Queued[]): void {
    const ackedAt = this.#now()
    for (const { key, bytes } of batch) {
      this.#db.remove(key).catch(this.#onError)
      if (this.#resendWindowMs === 0) continue
      const entry = Buffer.allocUnsafe(ACKED_AT_BYTES + bytes.length)
      entry.writeDoubleBE(ackedAt, 0)
      entry.set(bytes, ACKED_AT_BYTES)
      this.#sent.put(key, entry).catch(this.#onError)
      this.#keep(key, ackedAt)
    }
    this.#queue.splice(0, batch.length)
    this.#prune()
  }

  #keep(key: number, ackedAt: number): void {
    const last = this.#kept.at(-1)
    if (last !== undefined && last.ackedAt === ackedAt) {
      last.to = key
      last.count++
    } else this.#kept.push({ from: key, to: key, count: 1, ackedAt })
    this.#keptCount++
  }

  /** Drop kept events past the window, and the oldest runs beyond resendMax. */
  #prune(): void {
    const oldest = this.#now() - this.#resendWindowMs
    let drop = 0
    while (drop < this.#kept.length && (this.#kept[drop]!.ackedAt < oldest || this.#keptCount > this.#resendMax)) {
      const run = this.#kept[drop]!
      for (let key = run.from; key <= run.to; key++) this.#sent.remove(key).catch(this.#onError)
      this.#keptCount -= run.count
      drop++
    }
    if (drop > 0) this.#kept.splice(0, drop)
  }

  /** A disruption: what is kept goes again, from the oldest, before anything queued. */
  #disrupted(): void {
    if (this.#kept.length > 0) {
      this.#resendFrom = this.#kept[0]!.from
      this.#resent = 0
    }
  }

  /** Every WATCH_MS and before each append: a reconnection of the log is a disruption; old kept events go. */
  #look(): void {
    this.#prune()
    const reconnects = reconnectsOf(this.#log)
    if (reconnects === this.#reconnects) return
    this.#reconnects = reconnects
    this.#disrupted()
    this.#kick()
  }

  #scheduleRetry(): void {
    if (this.#closed) return
    const delay = this.#retryDelay
    this.#retryDelay = Math.min(this.#maxRetryMs, this.#retryDelay * 2)
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined
      this.#kick()
    }, delay)
    // The events are on disk: a pending retry alone must not keep a finished process alive.
    this.#retryTimer.unref()
  }
}

function reconnectsOf(log: EventLog): number | undefined {
  return (log as Partial<CountsReconnects>).reconnects
}
