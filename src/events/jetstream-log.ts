import {
  DiscardPolicy,
  jetstream,
  jetstreamManager,
  JetStreamApiError,
  RetentionPolicy,
  StorageType,
  type Consumer,
  type JetStreamClient,
  type JetStreamManager,
} from '@nats-io/jetstream'
import { connect, nanos, type NatsConnection, type Subscription } from '@nats-io/transport-node'
import { decodeEvent, encodeEvent } from './codec.js'
import { EventBatch } from './event-batch.js'
import { READ_TIMEOUT_MS, ReaderThread, readerThreadOptions } from './read-in-thread.js'
import { FollowLoop, FollowerSet } from './follow-loop.js'
import {
  EventLogUnavailable,
  READ_ALL_DEFAULTS,
  WrongExpectedVersion,
  type AccountStream,
  type EventLog,
  type LogFollower,
  type ReadAllOptions,
} from './log.js'
import { accountStreamSubject, subjectOf, type StoredEvent, type TollgateEvent } from './types.js'

export interface JetStreamLogOptions {
  /** NATS server URL(s). */
  servers: string | string[]
  /** JetStream stream name, created on start if missing. */
  stream: string
  /** Events go to `<prefix>.<category>.<type>`; the stream holds `<prefix>.>`. */
  subjectPrefix: string
  /** Stream replicas when this call creates the stream (1 on a single server, 3 in a cluster). */
  replicas: number
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

/**
 * JetStream deduplicates a msgID seen within this window. An event re-sent later than this
 * after its first append would be stored twice; the outbox re-sends what it holds within seconds
 * of NATS coming back, and what was acknowledged at most 2 minutes before (its resend window, in
 * case the servers lost it), so ten minutes covers both with room for clocks that disagree.
 */
const DUPLICATE_WINDOW_MS = 10 * 60 * 1000
const DEFAULT_TIMEOUT_MS = 5_000
/** Publishes in flight at once: pipelining makes a 5,000-event append ~50× faster than one by one. */
const PUBLISH_WINDOW = 256
/** Most events handed to one follow batch. */
const FOLLOW_BATCH = 1000
/**
 * A follower is woken by a core subscription on the stream's subjects as soon as anyone
 * publishes; this slower poll only covers publishes missed while the connection was down.
 */
const FOLLOW_POLL_MS = 1_000
/**
 * Most messages asked for in one fetch of readAll (each fetch must end within READ_TIMEOUT_MS).
 * An ordered consumer takes one fetch at a time, and each waits a round trip for the server to
 * start sending: at 5,000 a fetch, a replay of 1,000,000 events waited 1.4 s of its 19; at 20,000, 0.7 s.
 */
const FETCH_MAX = 20_000
/**
 * readAll of at least this many events runs the NATS client in a worker thread (read-in-thread.ts),
 * beside the projector: a replay of 1,000,000 events spent half its time in the client. Below,
 * the thread's start (~0.1 s) is more than it saves.
 */
const READ_THREAD_FROM = 20_000

/**
 * The event log on NATS JetStream: shared by every gateway instance and the CLI, replicated by
 * the NATS cluster. Each event is published to `subjectOf(event, prefix)` with `msgID: event.id`,
 * so a re-sent event is acknowledged as a duplicate and stored once (within the window).
 *
 * The client reconnects forever in the background; while it is disconnected, every call
 * rejects at once with EventLogUnavailable instead of queueing (the Outbox keeps the events
 * and retries), so nothing on the hot path ever waits for NATS.
 * @example
 * const log = await JetStreamLog.connect({ servers: 'nats://127.0.0.1:4222', stream: 'TOLLGATE', subjectPrefix: 'tollgate', replicas: 1 })
 */
export class JetStreamLog implements EventLog {
  readonly kind = 'jetstream' as const
  readonly #opts: Required<Omit<JetStreamLogOptions, 'name' | 'onError' | 'readerThread'>> & Pick<JetStreamLogOptions, 'name' | 'onError' | 'readerThread'>
  readonly #followers = new FollowerSet()
  /** The connection, once made (a log opened while NATS is down has none until it comes back). */
  #conn: { nc: NatsConnection; js: JetStreamClient; jsm: JetStreamManager } | undefined
  #wakeSub: Subscription | undefined
  #connected = false
  #reconnects = 0
  #closed = false
  #retry: NodeJS.Timeout | undefined
  /** Whether the stream has account events under the old subjects (looked up once). */
  #legacy: Promise<boolean> | undefined

  private constructor(opts: JetStreamLogOptions) {
    this.#opts = { timeoutMs: DEFAULT_TIMEOUT_MS, readThreadFrom: READ_THREAD_FROM, ...opts }
  }

  /**
   * Connect, and create the stream if it is missing. Rejects with EventLogUnavailable when NATS
   * cannot be reached now (the caller decides whether to retry or to stop).
   */
  static async connect(opts: JetStreamLogOptions): Promise<JetStreamLog> {
    const log = new JetStreamLog(opts)
    log.#attach(await dial(log.#opts))
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
    try {
      log.#attach(await dial(log.#opts))
    } catch (err) {
      if (!(err instanceof EventLogUnavailable)) throw err
      onWaiting?.(err)
      log.#dialLater()
    }
    return log
  }

  /** Whether NATS is connected now (false while it reconnects, or before the first connection). */
  get connected(): boolean {
    return this.#connected
  }

  /**
   * How many times the connection came back after it was lost. The outbox sends its kept events
   * again after one: the servers reached again may have restarted without writes they had acknowledged.
   */
  get reconnects(): number {
    return this.#reconnects
  }

  #dialLater(): void {
    this.#retry = setTimeout(() => {
      dial(this.#opts).then(
        (conn) => {
          if (this.#closed) return void conn.nc.close().catch(() => undefined)
          this.#attach(conn)
          this.#followers.wakeAll()
        },
        (err: unknown) => {
          if (this.#closed) return
          if (err instanceof StreamMismatch) this.#opts.onError?.(err)
          this.#dialLater()
        },
      )
    }, DIAL_RETRY_MS)
  }

  #attach(conn: { nc: NatsConnection; js: JetStreamClient; jsm: JetStreamManager }): void {
    this.#conn = conn
    this.#connected = true
    void this.#watchStatus(conn.nc)
    if (this.#followers.size > 0) this.#ensureWakeSubscription()
  }

  async append(events: readonly TollgateEvent[]): Promise<void> {
    const { js } = this.#reachable()
    const { subjectPrefix, timeoutMs } = this.#opts
    // A sliding window: the next publish goes out as soon as one of the window is acknowledged.
    // One connection delivers publishes in order, so the stream stores them in order.
    const inFlight = new Set<Promise<void>>()
    let failure: { cause: unknown } | undefined
    for (const event of events) {
      if (failure !== undefined) break
      const ack: Promise<void> = js.publish(subjectOf(event, subjectPrefix), encodeEvent(event), { msgID: event.id, timeout: timeoutMs }).then(
        () => void inFlight.delete(ack),
        (cause: unknown) => {
          inFlight.delete(ack)
          failure ??= { cause }
        },
      )
      inFlight.add(ack)
      if (inFlight.size >= PUBLISH_WINDOW) await Promise.race(inFlight)
    }
    await Promise.all(inFlight)
    if (failure !== undefined) {
      throw new EventLogUnavailable(`JetStream did not acknowledge an append to ${this.#opts.stream}`, { cause: failure.cause })
    }
  }

  async appendToAccount(accountId: string, events: readonly TollgateEvent[], expectedVersion: number): Promise<number> {
    const { js } = this.#reachable()
    const { subjectPrefix, timeoutMs } = this.#opts
    const subject = accountStreamSubject(accountId, subjectPrefix)
    let version = expectedVersion
    // One by one, each expecting the sequence the previous one got: a command that raced another
    // fails on its first event, before anything of it is stored. (nats-server 2.9 has no atomic
    // batch: a command cut between two of its events leaves the first ones; the deciders finish
    // such a command when it is decided again, see ConfirmPayment.)
    for (const event of events) {
      const own = subjectOf(event, subjectPrefix) === subject
      try {
        const ack = await js.publish(subjectOf(event, subjectPrefix), encodeEvent(event), {
          msgID: event.id,
          timeout: timeoutMs,
          ...(own ? { expect: { lastSubjectSequence: version } } : {}),
        })
        // A duplicate is not checked against the expected sequence by the server: an event with
        // this id was appended by another command since our version, so this one is stale too.
        if (own && ack.duplicate) throw new WrongExpectedVersion(accountId, version)
        if (own) version = ack.seq
      } catch (cause) {
        if (cause instanceof WrongExpectedVersion) throw cause
        if (cause instanceof JetStreamApiError && cause.code === WRONG_LAST_SEQUENCE) throw new WrongExpectedVersion(accountId, version, { cause })
        throw new EventLogUnavailable(`JetStream did not acknowledge an append to ${this.#opts.stream}`, { cause })
      }
    }
    return version
  }

  async readAccount(accountId: string, after = 0): Promise<AccountStream> {
    const conn = this.#reachable()
    const subject = accountStreamSubject(accountId, this.#opts.subjectPrefix)
    try {
      const events = await withTimeout(this.#readSubject(conn, subject, true, after), READ_TIMEOUT_MS, 'read of an account')
      if (after > 0) return { events, version: events.at(-1)?.seq ?? after }
      // A log written before accounts had their own subject: their older events are read too
      // (by a whole read only: nothing is written under those subjects any more).
      const legacy = (await this.#hasLegacySubjects(conn))
        ? await withTimeout(this.#readSubject(conn, `${this.#opts.subjectPrefix}.accounts.*`, false), READ_TIMEOUT_MS, 'read of old account events')
        : []
      const own = legacy.filter((s) => 'accountId' in s.event && s.event.accountId === accountId)
      const version = events.at(-1)?.seq ?? 0
      return { events: [...own, ...events].sort((a, b) => a.seq - b.seq), version }
    } catch (cause) {
      if (cause instanceof EventLogUnavailable) throw cause
      throw new EventLogUnavailable(`cannot read account ${accountId} from ${this.#opts.stream}`, { cause })
    }
  }

  /**
   * Every message on `subject` (a filter) past seq `after`, in order. `exact`: the subject is one
   * subject (no wildcard): its last message says whether there is anything new before a consumer is made.
   */
  async #readSubject(conn: { js: JetStreamClient; jsm: JetStreamManager }, subject: string, exact: boolean, after = 0): Promise<StoredEvent[]> {
    let last: number
    if (exact) {
      const msg = await conn.jsm.streams.getMessage(this.#opts.stream, { last_by_subj: subject }).catch((err: unknown) => {
        if (err instanceof JetStreamApiError && err.code === NO_MESSAGE) return null
        throw err
      })
      if (msg === null || msg.seq <= after) return []
      last = msg.seq
    } else {
      last = (await conn.jsm.streams.info(this.#opts.stream)).state.last_seq
    }
    // One filter subject as a string: an array needs nats-server 2.10, Debian ships 2.9.
    const consumer = await conn.js.consumers.get(this.#opts.stream, { filter_subjects: subject, ...(after > 0 ? { opt_start_seq: after + 1 } : {}) })
    const out: StoredEvent[] = []
    try {
      for (;;) {
        const { num_pending: pending } = await consumer.info(true)
        if (pending === 0) break
        const messages = await consumer.fetch({ max_messages: Math.min(pending, FOLLOW_BATCH), expires: READ_TIMEOUT_MS / 2 })
        let got = 0
        for await (const m of messages) {
          out.push({ seq: m.seq, event: decodeEvent(m.data) })
          got++
          if (got >= Math.min(pending, FOLLOW_BATCH) || m.seq >= last) break
        }
        if (got === 0 || out.at(-1)!.seq >= last) break
      }
      return out
    } finally {
      consumer.delete().catch(() => undefined)
    }
  }

  /** Whether the stream holds account events under the subjects of before the account token. */
  async #hasLegacySubjects(conn: { jsm: JetStreamManager }): Promise<boolean> {
    this.#legacy ??= conn.jsm.streams
      .info(this.#opts.stream, { subjects_filter: `${this.#opts.subjectPrefix}.accounts.*` })
      .then((info) => Object.keys(info.state.subjects ?? {}).length > 0)
    return this.#legacy
  }

  async read(from: number, limit: number): Promise<StoredEvent[]> {
    const conn = this.#reachable()
    try {
      return await withTimeout(this.#read(conn, Math.max(1, from), limit), READ_TIMEOUT_MS, 'read')
    } catch (cause) {
      if (cause instanceof EventLogUnavailable) throw cause
      throw new EventLogUnavailable(`cannot read stream ${this.#opts.stream}`, { cause })
    }
  }

  async readAll(from: number, onBatch: (batch: EventBatch) => Promise<void> | void, opts: ReadAllOptions = {}): Promise<number> {
    const conn = this.#reachable()
    const first = Math.max(1, from)
    const to = opts.to ?? (await this.lastSeq())
    if (first > to) return first - 1
    const batch = opts.batch ?? READ_ALL_DEFAULTS.batch
    if (to - first + 1 >= this.#opts.readThreadFrom) {
      const started = this.#opts.readerThread
      const thread = started !== undefined && !started.used ? started : ReaderThread.start(readerThreadOptions(this.#opts))
      return thread.read({ from: first, to, batch, fetchMax: FETCH_MAX }, onBatch)
    }
    let consumer: Consumer
    try {
      consumer = await withTimeout(conn.js.consumers.get(this.#opts.stream, { opt_start_seq: first }), READ_TIMEOUT_MS, 'read')
    } catch (cause) {
      throw new EventLogUnavailable(`cannot read stream ${this.#opts.stream}`, { cause })
    }
    let last = first - 1
    let fetching: Promise<Fetched> | undefined
    try {
      // Fetches of a few thousand on the same consumer (it goes on where the last one stopped).
      // The next fetch is asked for before onBatch runs, so that the server sends while the batch
      // is applied, yet memory never holds more than a batch and one fetch (consume() would keep
      // pulling however long onBatch takes). A fetch adds to the batch being filled when it runs.
      const fetchNext = (into: EventBatch, after: number, room: number): Promise<Fetched> => {
        const fetched = this.#fetch(consumer, into, Math.min(FETCH_MAX, room, to - after))
        fetched.catch(() => undefined) // awaited later, after onBatch: not an unhandled rejection meanwhile
        return fetched
      }
      let events = new EventBatch()
      let next = fetchNext(events, last, batch)
      let empty = 0
      for (;;) {
        fetching = next
        // Timed from when we wait, not from when it was asked for: onBatch may take long.
        const got = await withTimeout(next, READ_TIMEOUT_MS, 'read').catch((cause: unknown) => {
          if (cause instanceof EventLogUnavailable) throw cause
          throw new EventLogUnavailable(`cannot read stream ${this.#opts.stream}`, { cause })
        })
        fetching = undefined
        const seq = events.lastSeq ?? last
        // An empty fetch: its request expired while we were busy, or the stream ends before `to`.
        empty = got.count === 0 ? empty + 1 : 0
        const end = seq >= to || got.atEnd || (empty > 0 && (await this.lastSeq()) <= seq)
        if (empty >= 3) throw new EventLogUnavailable(`stream ${this.#opts.stream} sent nothing after seq ${seq} in three fetches although it holds more`)
        const full = events.length >= batch
        const ready = full || (end && events.length > 0) ? events : undefined
        if (ready !== undefined) events = new EventBatch()
        if (!end) fetching = next = fetchNext(events, seq, full ? batch : batch - events.length)
        if (ready !== undefined) {
          await onBatch(ready)
          last = seq
        }
        if (end) return last
      }
    } finally {
      // A fetch still running when onBatch failed: let it end, then drop the consumer.
      void Promise.resolve(fetching)
        .catch(() => undefined)
        .finally(() => {
          // Ordered consumers are ephemeral, but would linger on the server for minutes.
          consumer.delete().catch(() => undefined)
        })
    }
  }

  /** Up to `n` messages from the consumer, added to `into`; `atEnd`: the stream had none after the last one. */
  async #fetch(consumer: Consumer, into: EventBatch, n: number): Promise<Fetched> {
    const messages = await consumer.fetch({ max_messages: n, expires: READ_TIMEOUT_MS / 2 })
    let count = 0
    let atEnd = false
    for await (const m of messages) {
      into.push(m.seq, m.data)
      count++
      atEnd = m.info.pending === 0
      if (count >= n || atEnd) break
    }
    return { count, atEnd }
  }

  async lastSeq(): Promise<number> {
    const { jsm } = this.#reachable()
    try {
      return (await jsm.streams.info(this.#opts.stream)).state.last_seq
    } catch (cause) {
      throw new EventLogUnavailable(`cannot read the state of stream ${this.#opts.stream}`, { cause })
    }
  }

  follow(from: number, onBatch: (batch: StoredEvent[]) => Promise<void>): LogFollower {
    this.#assertOpen()
    const loop = new FollowLoop({
      from,
      onBatch,
      read: (next) => this.read(next, FOLLOW_BATCH),
      idleWaitMs: FOLLOW_POLL_MS,
      onError: this.#opts.onError,
    })
    this.#ensureWakeSubscription()
    return this.#followers.start(loop)
  }

  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    clearTimeout(this.#retry)
    if (this.#opts.readerThread?.used === false) this.#opts.readerThread.stop()
    await this.#followers.stopAll()
    await this.#conn?.nc.close()
  }

  /** Events from `from` on with an ordered consumer starting at that stream sequence. */
  async #read(conn: { js: JetStreamClient; jsm: JetStreamManager }, from: number, limit: number): Promise<StoredEvent[]> {
    const { state } = await conn.jsm.streams.info(this.#opts.stream)
    const first = Math.max(from, state.first_seq)
    // Ask for exactly what exists: a fetch for more would wait its whole expiry at the end.
    const wanted = Math.min(limit, state.last_seq - first + 1)
    if (wanted <= 0) return []
    const consumer = await conn.js.consumers.get(this.#opts.stream, { opt_start_seq: first })
    try {
      const messages = await consumer.fetch({ max_messages: wanted, expires: READ_TIMEOUT_MS / 2 })
      const out: StoredEvent[] = []
      for await (const m of messages) {
        out.push({ seq: m.seq, event: decodeEvent(m.data) })
        if (out.length >= wanted) break
      }
      return out
    } finally {
      // Ordered consumers are ephemeral, but would linger on the server for minutes.
      consumer.delete().catch(() => undefined)
    }
  }

  /** One core subscription on the stream's subjects wakes every follower the moment anyone appends. */
  #ensureWakeSubscription(): void {
    if (this.#wakeSub || this.#conn === undefined) return
    this.#wakeSub = this.#conn.nc.subscribe(`${this.#opts.subjectPrefix}.>`, {
      callback: () => {
        this.#followers.wakeAll()
      },
    })
  }

  async #watchStatus(nc: NatsConnection): Promise<void> {
    for await (const status of nc.status()) {
      if (status.type === 'disconnect') this.#connected = false
      else if (status.type === 'reconnect') {
        this.#connected = true
        this.#reconnects++
        // Publishes made while we were away were not seen by the wake subscription.
        this.#followers.wakeAll()
      }
    }
  }

  #assertOpen(): void {
    if (this.#closed) throw new EventLogUnavailable('JetStream log is closed')
  }

  #reachable(): { nc: NatsConnection; js: JetStreamClient; jsm: JetStreamManager } {
    this.#assertOpen()
    if (this.#conn === undefined) throw new EventLogUnavailable(`NATS at ${String(this.#opts.servers)} has not been reached yet (connecting in the background)`)
    // Fail fast: a request made while disconnected would sit in the reconnect buffer until its
    // time-out, and be sent late, after later ones.
    if (!this.#connected) throw new EventLogUnavailable('NATS is disconnected (reconnecting in the background)')
    return this.#conn
  }
}

/** What one fetch of readAll got. */
interface Fetched {
  /** How many events it added to the batch. */
  count: number
  /** The stream had no message after the last one. */
  atEnd: boolean
}

/** Pause between attempts to reach NATS for a log opened while it was down. */
const DIAL_RETRY_MS = 1_000

/** Connect to NATS and make sure the stream exists. */
async function dial(
  opts: Required<Omit<JetStreamLogOptions, 'name' | 'onError' | 'readerThread'>> & Pick<JetStreamLogOptions, 'name'>,
): Promise<{ nc: NatsConnection; js: JetStreamClient; jsm: JetStreamManager }> {
  let nc: NatsConnection
  try {
    nc = await connect({
      servers: opts.servers,
      name: opts.name,
      timeout: opts.timeoutMs,
      // Never give up: a NATS restart or a network cut must not end the gateway's log.
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
    })
  } catch (cause) {
    throw new EventLogUnavailable(`cannot connect to NATS at ${String(opts.servers)}`, { cause })
  }
  try {
    const jsm = await jetstreamManager(nc, { timeout: opts.timeoutMs })
    await ensureStream(jsm, opts)
    return { nc, jsm, js: jetstream(nc, { timeout: opts.timeoutMs }) }
  } catch (cause) {
    await nc.close().catch(() => undefined)
    if (cause instanceof StreamMismatch) throw cause
    throw new EventLogUnavailable(`JetStream stream ${opts.stream} is not available`, { cause })
  }
}

/** The existing stream does not hold the configured subjects: a configuration error, not an outage. */
export class StreamMismatch extends Error {
  override name = 'StreamMismatch'
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
  }
}

/** Stream not found, as JetStream's API says it. */
const STREAM_NOT_FOUND = 10059
/** An append's expected last subject sequence was not the subject's last sequence. */
const WRONG_LAST_SEQUENCE = 10071
/** No message matched a get (an account without events). */
const NO_MESSAGE = 10037

async function ensureStream(jsm: JetStreamManager, opts: Pick<JetStreamLogOptions, 'stream' | 'subjectPrefix' | 'replicas'>): Promise<void> {
  const subject = `${opts.subjectPrefix}.>`
  try {
    const info = await jsm.streams.info(opts.stream)
    if (!info.config.subjects?.includes(subject)) {
      throw new StreamMismatch(
        `stream ${opts.stream} exists with subjects ${JSON.stringify(info.config.subjects)}, not ${subject}: ` + 'fix events.stream or events.subjectPrefix',
      )
    }
    return
  } catch (err) {
    if (!(err instanceof JetStreamApiError && err.code === STREAM_NOT_FOUND)) throw err
  }
  try {
    await jsm.streams.add({
      name: opts.stream,
      subjects: [subject],
      storage: StorageType.File,
      retention: RetentionPolicy.Limits,
      // The log is the source of truth: never drop old events to make room.
      discard: DiscardPolicy.New,
      num_replicas: opts.replicas,
      duplicate_window: nanos(DUPLICATE_WINDOW_MS),
    })
  } catch (err) {
    // Another instance may have created it between our info and add: fine if it exists now.
    await jsm.streams.info(opts.stream).catch(() => {
      throw err
    })
  }
}

function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new EventLogUnavailable(`JetStream ${what} took longer than ${ms} ms`)), ms)
  })
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer))
}
