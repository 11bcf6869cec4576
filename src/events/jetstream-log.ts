import {
  DiscardPolicy,
  jetstream,
  jetstreamManager,
  JetStreamApiError,
  RetentionPolicy,
  StorageType,
  type JetStreamClient,
  type JetStreamManager,
} from '@nats-io/jetstream'
import { connect, nanos, type NatsConnection, type Subscription } from '@nats-io/transport-node'
import { decodeEvent, encodeEvent } from './codec.js'
import { FollowLoop, FollowerSet } from './follow-loop.js'
import { EventLogUnavailable, type EventLog, type LogFollower } from './log.js'
import { subjectOf, type StoredEvent, type TollgateEvent } from './types.js'

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
}

/**
 * JetStream deduplicates a msgID seen within this window. An event re-sent later than this
 * after its first append would be stored twice; the outbox re-sends within seconds, so ten
 * minutes covers an outage of NATS much longer than its restart.
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
/** Reads longer than this (server gone mid-fetch) give up with EventLogUnavailable. */
const READ_TIMEOUT_MS = 10_000

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
  readonly #nc: NatsConnection
  readonly #js: JetStreamClient
  readonly #jsm: JetStreamManager
  readonly #opts: Required<Omit<JetStreamLogOptions, 'name' | 'onError'>> & Pick<JetStreamLogOptions, 'onError'>
  readonly #followers = new FollowerSet()
  #wakeSub: Subscription | undefined
  #connected = true
  #closed = false

  private constructor(nc: NatsConnection, jsm: JetStreamManager, opts: JetStreamLogOptions) {
    this.#nc = nc
    this.#jsm = jsm
    this.#opts = { timeoutMs: DEFAULT_TIMEOUT_MS, ...opts }
    this.#js = jetstream(nc, { timeout: this.#opts.timeoutMs })
    void this.#watchStatus()
  }

  /**
   * Connect, and create the stream if it is missing. Rejects with EventLogUnavailable when NATS
   * cannot be reached now (the caller decides whether to retry or to stop).
   */
  static async connect(opts: JetStreamLogOptions): Promise<JetStreamLog> {
    const timeout = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS
    let nc: NatsConnection
    try {
      nc = await connect({
        servers: opts.servers,
        name: opts.name,
        timeout,
        // Never give up: a NATS restart or a network cut must not end the gateway's log.
        maxReconnectAttempts: -1,
        reconnectTimeWait: 250,
      })
    } catch (cause) {
      throw new EventLogUnavailable(`cannot connect to NATS at ${String(opts.servers)}`, { cause })
    }
    try {
      const jsm = await jetstreamManager(nc, { timeout })
      await ensureStream(jsm, opts)
      return new JetStreamLog(nc, jsm, opts)
    } catch (cause) {
      await nc.close().catch(() => undefined)
      if (cause instanceof StreamMismatch) throw cause
      throw new EventLogUnavailable(`JetStream stream ${opts.stream} is not available`, { cause })
    }
  }

  async append(events: readonly TollgateEvent[]): Promise<void> {
    this.#assertReachable()
    const { subjectPrefix, timeoutMs } = this.#opts
    for (let i = 0; i < events.length; i += PUBLISH_WINDOW) {
      const window = events.slice(i, i + PUBLISH_WINDOW)
      // One connection delivers publishes in order, so the stream stores them in order.
      const acks = window.map((event) =>
        this.#js.publish(subjectOf(event, subjectPrefix), encodeEvent(event), { msgID: event.id, timeout: timeoutMs }),
      )
      const results = await Promise.allSettled(acks)
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')
      if (failed) {
        throw new EventLogUnavailable(`JetStream did not acknowledge an append to ${this.#opts.stream}`, {
          cause: failed.reason,
        })
      }
    }
  }

  async read(from: number, limit: number): Promise<StoredEvent[]> {
    this.#assertReachable()
    try {
      return await withTimeout(this.#read(Math.max(1, from), limit), READ_TIMEOUT_MS, 'read')
    } catch (cause) {
      if (cause instanceof EventLogUnavailable) throw cause
      throw new EventLogUnavailable(`cannot read stream ${this.#opts.stream}`, { cause })
    }
  }

  async lastSeq(): Promise<number> {
    this.#assertReachable()
    try {
      return (await this.#jsm.streams.info(this.#opts.stream)).state.last_seq
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
    await this.#followers.stopAll()
    await this.#nc.close()
  }

  /** Events from `from` on with an ordered consumer starting at that stream sequence. */
  async #read(from: number, limit: number): Promise<StoredEvent[]> {
    const { state } = await this.#jsm.streams.info(this.#opts.stream)
    const first = Math.max(from, state.first_seq)
    // Ask for exactly what exists: a fetch for more would wait its whole expiry at the end.
    const wanted = Math.min(limit, state.last_seq - first + 1)
    if (wanted <= 0) return []
    const consumer = await this.#js.consumers.get(this.#opts.stream, { opt_start_seq: first })
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
    if (this.#wakeSub) return
    this.#wakeSub = this.#nc.subscribe(`${this.#opts.subjectPrefix}.>`, {
      callback: () => {
        this.#followers.wakeAll()
      },
    })
  }

  async #watchStatus(): Promise<void> {
    for await (const status of this.#nc.status()) {
      if (status.type === 'disconnect') this.#connected = false
      else if (status.type === 'reconnect') {
        this.#connected = true
        // Publishes made while we were away were not seen by the wake subscription.
        this.#followers.wakeAll()
      }
    }
  }

  #assertOpen(): void {
    if (this.#closed) throw new EventLogUnavailable('JetStream log is closed')
  }

  #assertReachable(): void {
    this.#assertOpen()
    // Fail fast: a request made while disconnected would sit in the reconnect buffer until its
    // time-out, and be sent late, after later ones.
    if (!this.#connected) throw new EventLogUnavailable('NATS is disconnected (reconnecting in the background)')
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

async function ensureStream(jsm: JetStreamManager, opts: JetStreamLogOptions): Promise<void> {
  const subject = `${opts.subjectPrefix}.>`
  try {
    const info = await jsm.streams.info(opts.stream)
    if (!info.config.subjects?.includes(subject)) {
      throw new StreamMismatch(
        `stream ${opts.stream} exists with subjects ${JSON.stringify(info.config.subjects)}, not ${subject}: ` +
          'fix events.stream or events.subjectPrefix',
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
