import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream'
import { connect, type NatsConnection } from '@nats-io/transport-node'
import { EventLogUnavailable } from '../errors.js'
import { StreamMismatch } from './errors.js'
import { ensureStream, type StreamOptions } from './stream.js'

/** One connection to NATS and the two JetStream faces over it: what every part of the log works with. */
export interface JetStreamConnection {
  readonly nc: NatsConnection
  readonly js: JetStreamClient
  readonly jsm: JetStreamManager
}

export interface DialOptions extends StreamOptions {
  /** NATS server URL(s). */
  servers: string | string[]
  /** Connection name shown by the server (monitoring). */
  name?: string
  /** Longest wait for one acknowledgement or API reply, in ms. */
  timeoutMs: number
}

/** Pause between attempts to reach NATS for a log opened while it was down. */
const DIAL_RETRY_MS = 1_000

/** Connect to NATS and make sure the stream exists. */
export async function dial(opts: DialOptions): Promise<JetStreamConnection> {
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

/** What the log is told of its connection's life. */
export interface ConnectionWatcher {
  /** The connection came back, or was made late: what it carried (a follower's fetch) starts over. */
  reconnected(): void
  /** A failure retried in the background (a late dial that found the stream mismatched). */
  onError?: (err: unknown) => void
}

/**
 * The log's connection over its life: made now, or in the background while NATS cannot be
 * reached; watched (disconnected, back again); and handed to each call only while it is up.
 * While it is down every call rejects at once with EventLogUnavailable instead of queueing (the
 * outbox keeps the events and retries), so nothing on the hot path ever waits for NATS.
 */
export class NatsLink {
  #conn: JetStreamConnection | undefined
  #connected = false
  #reconnects = 0
  #closed = false
  #retry: NodeJS.Timeout | undefined

  constructor(
    private readonly opts: DialOptions,
    private readonly watcher: ConnectionWatcher,
  ) {}

  /** Connect now; rejects with EventLogUnavailable when NATS cannot be reached (or StreamMismatch). */
  async connect(): Promise<void> {
    this.#attach(await dial(this.opts))
  }

  /**
   * Connect now when NATS answers, else keep trying in the background (`onWaiting` is told why).
   * Only a configuration error (StreamMismatch) rejects.
   */
  async open(onWaiting?: (err: EventLogUnavailable) => void): Promise<void> {
    try {
      this.#attach(await dial(this.opts))
    } catch (err) {
      if (!(err instanceof EventLogUnavailable)) throw err
      onWaiting?.(err)
      this.#dialLater()
    }
  }

  /** Whether NATS is connected now (false while it reconnects, or before the first connection). */
  get connected(): boolean {
    return this.#connected
  }

  /** How many times the connection came back after it was lost. */
  get reconnects(): number {
    return this.#reconnects
  }

  get closed(): boolean {
    return this.#closed
  }

  /** The connection, for a call: rejects at once when the log is closed, not connected yet, or disconnected. */
  reachable(): JetStreamConnection {
    this.assertOpen()
    if (this.#conn === undefined) throw new EventLogUnavailable(`NATS at ${String(this.opts.servers)} has not been reached yet (connecting in the background)`)
    // Fail fast: a request made while disconnected would sit in the reconnect buffer until its
    // time-out, and be sent late, after later ones.
    if (!this.#connected) throw new EventLogUnavailable('NATS is disconnected (reconnecting in the background)')
    return this.#conn
  }

  assertOpen(): void {
    if (this.#closed) throw new EventLogUnavailable('JetStream log is closed')
  }

  /** Closed from now on (calls reject); `drain` runs, then the connection closes. */
  async close(drain: () => Promise<void>): Promise<void> {
    this.#closed = true
    clearTimeout(this.#retry)
    await drain()
    await this.#conn?.nc.close()
  }

  #dialLater(): void {
    this.#retry = setTimeout(() => {
      dial(this.opts).then(
        (conn) => {
          if (this.#closed) return void conn.nc.close().catch(() => undefined)
          this.#attach(conn)
          this.watcher.reconnected()
        },
        (err: unknown) => {
          if (this.#closed) return
          if (err instanceof StreamMismatch) this.watcher.onError?.(err)
          this.#dialLater()
        },
      )
    }, DIAL_RETRY_MS)
  }

  #attach(conn: JetStreamConnection): void {
    this.#conn = conn
    this.#connected = true
    void this.#watchStatus(conn.nc)
  }

  async #watchStatus(nc: NatsConnection): Promise<void> {
    for await (const status of nc.status()) {
      if (status.type === 'disconnect') this.#connected = false
      else if (status.type === 'reconnect') {
        this.#connected = true
        this.#reconnects++
        // The followers' fetches may have been on a server that restarted and lost their consumers.
        this.watcher.reconnected()
      }
    }
  }
}
