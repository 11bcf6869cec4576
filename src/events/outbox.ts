import { open, type Database, type RootDatabase } from 'lmdb'
import { decodeEvent, encodeEvent } from './codec.js'
import type { EventLog } from './log.js'
import type { TollgateEvent } from './types.js'

export interface OutboxOptions {
  /** First pause before retrying an append the log refused, in ms (default 200); doubles on each failure. */
  retryMs?: number
  /** Longest pause between retries, in ms (default 5,000): bounded, so recovery is noticed soon. */
  maxRetryMs?: number
  /** Most events per append (default 500). */
  batchSize?: number
  /** Told about every failure (a refused append, a local write error); the outbox keeps going. */
  onError?: (err: unknown) => void
}

/** flush() gave up before the queue emptied (the log stayed unavailable). */
export class OutboxFlushTimeout extends Error {
  override name = 'OutboxFlushTimeout'
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
  }
}

/** publish() after close(): the events are not kept (reported through onError, never thrown). */
export class OutboxClosed extends Error {
  override name = 'OutboxClosed'
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
  }
}

interface Queued {
  key: number
  event: TollgateEvent
}

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
 * @example
 * const outbox = Outbox.open(join(dataDir, 'outbox'), log, { onError: (err) => logger.warn({ err }) })
 * outbox.publish(decision.events)
 */
export class Outbox {
  readonly #env: RootDatabase
  readonly #db: Database<Buffer, number>
  readonly #log: EventLog
  readonly #retryMs: number
  readonly #maxRetryMs: number
  readonly #batchSize: number
  readonly #onError: (err: unknown) => void
  /** The durable queue's content, in order, kept in memory so that the pump never reads disk. */
  readonly #queue: Queued[] = []
  readonly #emptyWaiters = new Set<() => void>()
  #nextKey: number
  #pump: Promise<void> | undefined
  #retryTimer: NodeJS.Timeout | undefined
  #retryDelay: number
  #closed = false

  private constructor(env: RootDatabase, log: EventLog, opts: OutboxOptions) {
    this.#env = env
    this.#db = env.openDB<Buffer, number>({ name: 'outbox', encoding: 'binary' })
    this.#log = log
    this.#retryMs = opts.retryMs ?? 200
    this.#maxRetryMs = Math.max(this.#retryMs, opts.maxRetryMs ?? 5_000)
    this.#batchSize = opts.batchSize ?? 500
    this.#onError = opts.onError ?? (() => undefined)
    this.#retryDelay = this.#retryMs
    let last = 0
    for (const { key, value } of this.#db.getRange()) {
      last = key
      try {
        this.#queue.push({ key, event: decodeEvent(value) })
      } catch (err) {
        // A corrupt entry would block every event behind it forever: report it and drop it.
        this.#onError(err)
        this.#db.remove(key).catch(this.#onError)
      }
    }
    this.#nextKey = last + 1
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
        // Not awaited: lmdb-js batches the writes of this event turn into one transaction.
        this.#db.put(key, Buffer.from(encodeEvent(event))).catch(this.#onError)
        this.#queue.push({ key, event })
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

  /**
   * Resolve once every queued event is acknowledged by the log and its local copy deleted.
   * For shutdown and tests; rejects with OutboxFlushTimeout after `timeoutMs` (default 10 s).
   */
  async flush(timeoutMs = 10_000): Promise<void> {
    if (this.#queue.length > 0) {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          this.#emptyWaiters.delete(done)
          reject(new OutboxFlushTimeout(`outbox still holds ${this.#queue.length} event(s) after ${timeoutMs} ms`))
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
    await this.#pump
    await this.#env.close()
  }

  #kick(): void {
    if (this.#pump || this.#retryTimer || this.#closed || this.#queue.length === 0) return
    this.#pump = this.#drain().finally(() => {
      this.#pump = undefined
      // A publish that came after the loop's last check found the pump still running.
      this.#kick()
    })
  }

  async #drain(): Promise<void> {
    // Let the publishes of this event turn join the first batch.
    await new Promise((resolve) => setImmediate(resolve))
    while (this.#queue.length > 0 && !this.#closed) {
      const batch = this.#queue.slice(0, this.#batchSize)
      try {
        await this.#log.append(batch.map((queued) => queued.event))
      } catch (err) {
        this.#onError(err)
        this.#scheduleRetry()
        return
      }
      this.#retryDelay = this.#retryMs
      for (const { key } of batch) this.#db.remove(key).catch(this.#onError)
      this.#queue.splice(0, batch.length)
    }
    if (this.#queue.length === 0) {
      for (const done of this.#emptyWaiters) done()
      this.#emptyWaiters.clear()
    }
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
