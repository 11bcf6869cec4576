import type { EventBatch } from './event-batch.js'
import { FollowerSet } from './follow-loop.js'
import { appendEvents, appendToAccountSubject } from './jetstream/append.js'
import { NatsLink, type JetStreamConnection } from './jetstream/connection.js'
import { FETCH_MAX, readAllInBatches } from './jetstream/read-all.js'
import { readRange, readSubject } from './jetstream/reads.js'
import { StreamFollower } from './jetstream/stream-follower.js'
import { withTimeout } from './jetstream/timed.js'
import { READ_ALL_DEFAULTS, type AccountStream, type EventLog, type LogFollower, type ReadAllOptions } from './log.js'
import { EventLogUnavailable } from './errors.js'
import { READ_TIMEOUT_MS, ReaderThread, readerThreadOptions } from './read-in-thread.js'
import { MAX_PARTITIONS, partitionPrefix, partitionStream } from './partitions.js'
import { accountStreamSubject, type StoredEvent, type TollgateEvent } from './types.js'

export { StreamMismatch } from './jetstream/errors.js'

export interface JetStreamLogOptions {
  /** NATS server URL(s). */
  servers: string | string[]
  /** JetStream stream name, created on start if missing. */
  stream: string
  /** Events go to `<prefix>.<category>.<type>`; the stream holds `<prefix>.>`. */
  subjectPrefix: string
  /** Stream replicas when this call creates the stream (1 on a single server, 3 in a cluster). */
  replicas: number
  /**
   * Usage partitions (events.partitions, default 1): with P > 1 usage goes to P streams of its own
   * beside `stream` (partitions.ts), each read by a log of its own (`partitions`).
   */
  partitions?: number
  /** This log is partition `partition` of `partitions` (made by the main log; read-only use). */
  partition?: number
  /** Connection name shown by the server (monitoring). */
  name?: string
  /** Longest wait for one acknowledgement or API reply, in ms (default 5,000). */
  timeoutMs?: number
  /** Told about failures a follower retries (a batch rejected by its handler, a failed read). */
  onError?: (err: unknown) => void
  /** readAll of at least this many events reads in a worker thread (default READ_THREAD_FROM). */
  readThreadFrom?: number
  /**
   * A reader thread started already on this stream (ReaderThread.start), for the first readAll
   * that reads in a thread; close() stops it if none did.
   */
  readerThread?: ReaderThread
}

const DEFAULT_TIMEOUT_MS = 5_000
/** Most events handed to one follow batch. */
const FOLLOW_BATCH = 1000
/**
 * How long a follower's fetch waits on a quiet stream before it asks again (its heartbeats are
 * checked at half of it): events come as they are appended whatever this is.
 */
const FOLLOW_FETCH_EXPIRES_MS = 10_000
/**
 * readAll of at least this many events runs the NATS client in a worker thread (read-in-thread.ts),
 * beside the projector: a replay of 1,000,000 events spent half its time in the client. Below,
 * the thread's start (~0.1 s) is more than it saves.
 */
const READ_THREAD_FROM = 20_000

/**
 * The event log on NATS JetStream: shared by every gateway instance and the CLI, replicated by
 * the NATS cluster. A face over its parts (src/events/jetstream/): the connection's life
 * (connection.ts), the stream (stream.ts), appends (append.ts), and reads that each go through
 * one ordered consumer (reads.ts, read-all.ts; a long range in a worker thread, read-in-thread.ts).
 * Each event is published to `subjectOf(event, prefix)` with `msgID: event.id`, so a re-sent
 * event is acknowledged as a duplicate and stored once (within the window).
 *
 * The client reconnects forever in the background; while it is disconnected, every call
 * rejects at once with EventLogUnavailable instead of queueing (the Outbox keeps the events
 * and retries), so nothing on the hot path ever waits for NATS.
 * @example
 * const log = await JetStreamLog.connect({ servers: 'nats://127.0.0.1:4222', stream: 'TOLLGATE', subjectPrefix: 'tollgate', replicas: 1 })
 */
export class JetStreamLog implements EventLog {
  readonly kind = 'jetstream' as const
  readonly #opts: Required<Omit<JetStreamLogOptions, 'name' | 'onError' | 'readerThread' | 'partition'>> &
    Pick<JetStreamLogOptions, 'name' | 'onError' | 'readerThread' | 'partition'>
  readonly partitions: readonly JetStreamLog[]
  readonly #followers = new FollowerSet()
  readonly #link: NatsLink
  /** Whether the stream has account events under the old subjects (looked up once). */
  #legacy: Promise<boolean> | undefined

  private constructor(opts: JetStreamLogOptions) {
    this.#opts = { timeoutMs: DEFAULT_TIMEOUT_MS, readThreadFrom: READ_THREAD_FROM, ...opts, partitions: opts.partitions ?? 1 }
    const { partitions } = this.#opts
    if (!Number.isInteger(partitions) || partitions < 1 || partitions > MAX_PARTITIONS) {
      throw new RangeError(`partitions must be a whole number from 1 to ${MAX_PARTITIONS}, got ${partitions}`)
    }
    // Each partition on a connection of its own: its reads (and a replay's reader thread) run beside the others'.
    this.partitions =
      opts.partition !== undefined || partitions === 1
        ? []
        : Array.from(
            { length: partitions },
            (_, p) =>
              new JetStreamLog({
                ...opts,
                stream: partitionStream(opts.stream, p),
                subjectPrefix: partitionPrefix(opts.subjectPrefix, p),
                partition: p,
                name: `${opts.name ?? 'tollgate'} usage ${p}`,
                readerThread: undefined,
              }),
          )
    this.#link = new NatsLink(this.#opts, {
      reconnected: () => this.#followers.wakeAll(),
      onError: this.#opts.onError,
    })
  }

  /**
   * Connect, and create the stream if it is missing. Rejects with EventLogUnavailable when NATS
   * cannot be reached now (the caller decides whether to retry or to stop).
   */
  static async connect(opts: JetStreamLogOptions): Promise<JetStreamLog> {
    const log = new JetStreamLog(opts)
    // The main stream first: it refuses partitions made for another P before any is created.
    await log.#link.connect()
    try {
      await Promise.all(log.partitions.map((partition) => partition.#link.connect()))
    } catch (err) {
      await log.close()
      throw err
    }
    return log
  }

  /**
   * A log for a gateway: connected now when NATS answers, else connecting in the background
   * (every call rejects with EventLogUnavailable meanwhile, so the outbox keeps the events and the
   * gateway serves from its projections). A gateway restarted during a NATS outage still starts.
   * Only a configuration error (StreamMismatch) rejects.
   */
  static async open(opts: JetStreamLogOptions, onWaiting?: (err: EventLogUnavailable) => void): Promise<JetStreamLog> {
    const log = new JetStreamLog(opts)
    await log.#link.open(onWaiting)
    // Each partition reached now or in the background, as the main stream: the outbox retries
    // usage that finds no partition stream yet, as any append that fails.
    await Promise.all(log.partitions.map((partition) => partition.#link.open()))
    return log
  }

  /** Whether NATS is connected now (false while it reconnects, or before the first connection); with partitions, for each of them too. */
  get connected(): boolean {
    return this.#link.connected && this.partitions.every((partition) => partition.connected)
  }

  /**
   * How many times the connection came back after it was lost. The outbox sends its kept events
   * again after one: the servers reached again may have restarted without writes they had acknowledged.
   */
  get reconnects(): number {
    return this.#link.reconnects
  }

  // Async, so that a log that is down rejects rather than throws: callers only catch the promise.
  async append(events: readonly TollgateEvent[]): Promise<void> {
    return appendEvents(this.#link.reachable().js, events, this.#opts)
  }

  async appendToAccount(accountId: string, events: readonly TollgateEvent[], expectedVersion: number): Promise<number> {
    return appendToAccountSubject(this.#link.reachable().js, accountId, events, expectedVersion, this.#opts)
  }

  async readAccount(accountId: string, after = 0): Promise<AccountStream> {
    const conn = this.#link.reachable()
    const { stream, subjectPrefix } = this.#opts
    const subject = accountStreamSubject(accountId, subjectPrefix)
    try {
      const events = await withTimeout(readSubject(conn, stream, subject, true, after), READ_TIMEOUT_MS, 'read of an account')
      if (after > 0) return { events, version: events.at(-1)?.seq ?? after }
      // A log written before accounts had their own subject: their older events are read too
      // (by a whole read only: nothing is written under those subjects any more).
      const legacy = (await this.#hasLegacySubjects(conn))
        ? await withTimeout(readSubject(conn, stream, `${subjectPrefix}.accounts.*`, false), READ_TIMEOUT_MS, 'read of old account events')
        : []
      const own = legacy.filter((s) => 'accountId' in s.event && s.event.accountId === accountId)
      const version = events.at(-1)?.seq ?? 0
      return { events: [...own, ...events].sort((a, b) => a.seq - b.seq), version }
    } catch (cause) {
      if (cause instanceof EventLogUnavailable) throw cause
      throw new EventLogUnavailable(`cannot read account ${accountId} from ${stream}`, { cause })
    }
  }

  /** Whether the stream holds account events under the subjects of before the account token. */
  #hasLegacySubjects(conn: JetStreamConnection): Promise<boolean> {
    this.#legacy ??= conn.jsm.streams
      .info(this.#opts.stream, { subjects_filter: `${this.#opts.subjectPrefix}.accounts.*` })
      .then((info) => Object.keys(info.state.subjects ?? {}).length > 0)
    return this.#legacy
  }

  async read(from: number, limit: number): Promise<StoredEvent[]> {
    const conn = this.#link.reachable()
    try {
      return await withTimeout(readRange(conn, this.#opts.stream, Math.max(1, from), limit), READ_TIMEOUT_MS, 'read')
    } catch (cause) {
      if (cause instanceof EventLogUnavailable) throw cause
      throw new EventLogUnavailable(`cannot read stream ${this.#opts.stream}`, { cause })
    }
  }

  async readAll(from: number, onBatch: (batch: EventBatch) => Promise<void> | void, opts: ReadAllOptions = {}): Promise<number> {
    const conn = this.#link.reachable()
    const first = Math.max(1, from)
    const to = opts.to ?? (await this.lastSeq())
    if (first > to) return first - 1
    const batch = opts.batch ?? READ_ALL_DEFAULTS.batch
    if (to - first + 1 >= this.#opts.readThreadFrom) {
      const started = this.#opts.readerThread
      const thread = started !== undefined && !started.used ? started : ReaderThread.start(readerThreadOptions(this.#opts))
      return thread.read({ from: first, to, batch, fetchMax: FETCH_MAX }, onBatch)
    }
    return readAllInBatches(conn.js, { stream: this.#opts.stream, first, to, batch, lastSeq: () => this.lastSeq() }, onBatch)
  }

  async lastSeq(): Promise<number> {
    const { jsm } = this.#link.reachable()
    try {
      return (await jsm.streams.info(this.#opts.stream)).state.last_seq
    } catch (cause) {
      throw new EventLogUnavailable(`cannot read the state of stream ${this.#opts.stream}`, { cause })
    }
  }

  follow(from: number, onBatch: (batch: StoredEvent[]) => Promise<void>): LogFollower {
    this.#link.assertOpen()
    const follower = new StreamFollower({
      stream: this.#opts.stream,
      from,
      batch: FOLLOW_BATCH,
      fetchExpiresMs: FOLLOW_FETCH_EXPIRES_MS,
      connection: () => this.#link.reachable(),
      onBatch,
      onError: this.#opts.onError,
    })
    return this.#followers.start(follower)
  }

  async close(): Promise<void> {
    if (this.#link.closed) return
    await this.#link.close(async () => {
      if (this.#opts.readerThread?.used === false) this.#opts.readerThread.stop()
      await this.#followers.stopAll()
    })
    await Promise.all(this.partitions.map((partition) => partition.close()))
  }
}
