import { connect, type NatsConnection, type NodeConnectionOptions, type Subscription } from '@nats-io/transport-node'

/** The root of a fleet's subjects: outside the event stream's, one fleet per stream. */
export function fleetSubjectRoot(config: { events: { subjectPrefix: string; stream: string } }): string {
  return `${config.events.subjectPrefix}_fleet.${config.events.stream}`
}

/**
 * The fleet's subjects under its root: heartbeats, limits for everyone (hot accounts, cooldowns,
 * open counts), the owners' hot marks, and under `owners` one subject per instance
 * (`<owners>.<instance>`) for the reports of the cold accounts it owns.
 */
export interface FleetSubjects {
  members: string
  limits: string
  hot: string
  owners: string
}

export function fleetSubjects(subjectRoot: string): FleetSubjects {
  return { members: `${subjectRoot}.members`, limits: `${subjectRoot}.limits`, hot: `${subjectRoot}.limits.hot`, owners: `${subjectRoot}.limits.to` }
}

/** How the instances of a fleet reach each other: NATS (FleetBus) or, for the workers of one machine without NATS, their supervisor (IpcFleetBus). */
export interface FleetChannel {
  readonly subjects: FleetSubjects
  readonly connected: boolean
  publish(subject: string, data: Uint8Array): void
  /** With `queue`, one subscriber of the queue group gets each message (NATS queue groups); without, every one does. */
  subscribe(subject: string, onMessage: (data: Uint8Array) => void, opts?: { queue?: string }): void
  close(): Promise<void>
}

/** How long close() waits for a first connection still being made. */
const CLOSE_WAIT_MS = 2_000
/** Pause between attempts at the first connection while NATS cannot be reached. */
const DIAL_RETRY_MS = 250
/** Longest one attempt at the first connection may take (a host that drops packets answers nothing). */
const DIAL_TIMEOUT_MS = CLOSE_WAIT_MS

/**
 * The fleet's channel: plain NATS publish/subscribe (not JetStream: what instances tell each other
 * is current state, worth nothing a second later, and must never wait on a disk). Its subjects
 * are outside the event stream's, and named after the stream, so that gateways sharing one event
 * stream are one fleet and two fleets can share a NATS cluster.
 *
 * It connects in the background and never gives up: a gateway starts and serves while NATS is
 * away, and the fleet treats that time as being cut off (see Fleet).
 */
export class FleetBus implements FleetChannel {
  readonly #subjects: FleetSubjects
  #nc: NatsConnection | undefined
  /** The first connection, while it is being made (it never gives up while NATS is away). */
  #connecting: Promise<NatsConnection | undefined> = Promise.resolve(undefined)
  #connected = false
  #closed = false
  /** The pause before the next attempt at the first connection, ended early by close(). */
  #pause: { timer: NodeJS.Timeout; end: () => void } | undefined
  readonly #handlers: { subject: string; onMessage: (data: Uint8Array) => void; queue?: string }[] = []
  readonly #subs: Subscription[] = []
  readonly #onStatus: (connected: boolean) => void

  private constructor(subjectRoot: string, onStatus: (connected: boolean) => void) {
    this.#subjects = fleetSubjects(subjectRoot)
    this.#onStatus = onStatus
  }

  /**
   * Start connecting to `servers` (resolves at once). `subjectRoot` e.g. `tollgate_fleet.TOLLGATE`.
   * @example
   * const bus = FleetBus.open(['nats://10.0.0.1:4222'], 'tollgate_fleet.TOLLGATE', (up) => log(up))
   */
  static open(servers: string | string[], subjectRoot: string, onStatus: (connected: boolean) => void, name = 'tollgate-fleet'): FleetBus {
    const bus = new FleetBus(subjectRoot, onStatus)
    bus.#connecting = bus.#firstConnection({
      servers,
      name,
      timeout: DIAL_TIMEOUT_MS,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
      pingInterval: 2_000,
      maxPingOut: 2,
    })
    void bus.#run()
    return bus
  }

  get subjects(): FleetSubjects {
    return this.#subjects
  }

  get connected(): boolean {
    return this.#connected
  }

  /** Publish when connected; dropped otherwise (state sent late would be wrong, not late). */
  publish(subject: string, data: Uint8Array): void {
    if (!this.#connected || this.#nc === undefined) return
    try {
      this.#nc.publish(subject, data)
    } catch {
      // Closed or draining meanwhile: the next interval publishes the state again.
    }
  }

  subscribe(subject: string, onMessage: (data: Uint8Array) => void, opts: { queue?: string } = {}): void {
    this.#handlers.push({ subject, onMessage, queue: opts.queue })
    if (this.#nc !== undefined) this.#subscribeOn(this.#nc, subject, onMessage, opts.queue)
  }

  /**
   * Close the connection. One still being made is waited for (briefly: NATS may be away) and
   * closed, so that a gateway that stops right after it started leaves no connection behind.
   */
  async close(): Promise<void> {
    this.#closed = true
    this.#connected = false
    if (this.#pause !== undefined) {
      clearTimeout(this.#pause.timer)
      this.#pause.end()
    }
    let timer: NodeJS.Timeout | undefined
    const gaveUp = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), CLOSE_WAIT_MS)))
    const nc = this.#nc ?? (await Promise.race([this.#connecting, gaveUp]))
    clearTimeout(timer)
    await nc?.close().catch(() => undefined)
  }

  /**
   * The first connection: attempt after attempt, until one is made or the bus is closed. Not the
   * client's own `waitOnFirstConnect`, whose attempts nothing can stop: a gateway whose start
   * failed while NATS was away closed its bus, and the attempts went on and kept the process
   * running forever (a supervisor never saw it exit, so never restarted it).
   */
  async #firstConnection(options: NodeConnectionOptions): Promise<NatsConnection | undefined> {
    while (!this.#closed) {
      try {
        return await connect(options)
      } catch {
        await new Promise<void>((end) => (this.#pause = { timer: setTimeout(end, DIAL_RETRY_MS), end }))
        this.#pause = undefined
      }
    }
    return undefined
  }

  async #run(): Promise<void> {
    const nc = await this.#connecting
    if (nc === undefined) return
    if (this.#closed) {
      await nc.close().catch(() => undefined)
      return
    }
    this.#nc = nc
    for (const h of this.#handlers) this.#subscribeOn(nc, h.subject, h.onMessage, h.queue)
    this.#setConnected(true)
    for await (const status of nc.status()) {
      if (status.type === 'disconnect') this.#setConnected(false)
      else if (status.type === 'reconnect') this.#setConnected(true)
    }
  }

  #subscribeOn(nc: NatsConnection, subject: string, onMessage: (data: Uint8Array) => void, queue: string | undefined): void {
    this.#subs.push(
      nc.subscribe(subject, {
        ...(queue === undefined ? {} : { queue }),
        callback: (err, msg) => {
          if (!err) onMessage(msg.data)
        },
      }),
    )
  }

  #setConnected(connected: boolean): void {
    if (this.#connected === connected || this.#closed) return
    this.#connected = connected
    this.#onStatus(connected)
  }
}
