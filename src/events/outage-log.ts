import type { Logger } from 'pino'

export interface OutageLogOptions {
  logger: Logger
  /** The warning when it begins, e.g. "NATS is unreachable: serving from the last projected state". */
  begins: string
  /** The line while it lasts, e.g. "NATS still unreachable". */
  lasts: string
  /** The line when it ends, e.g. "NATS is back". */
  ends: string
  /** What to report with each line (the outbox's backlog). */
  state: () => Record<string, unknown>
  /** Whether it is over; asked every POLL_MS while it lasts. */
  isUp: () => boolean
  /** How often the state is logged while it lasts (default 30 s). */
  everyMs?: number
}

/** How often a running outage asks whether it is over. */
const POLL_MS = 1_000

/**
 * An outage the gateway is built to ride out (NATS away: calls are served from the projections,
 * events wait in the outbox), logged as one: a warning when it begins, its state every `everyMs`
 * while it lasts, a line when it ends. Every part that meets it reports it with `report(err)` (the
 * log opened while NATS was away, the projector's first read, each append the outbox retries): the
 * first report begins the outage, the others only count. Without this, each retry of the
 * outbox logged a warning (one a second), and the projector's first read a stack trace at error
 * level, for an outage the manual says is served through.
 * @example
 * const outage = new OutageLog({ logger, begins: 'NATS is unreachable', lasts: 'NATS still unreachable', ends: 'NATS is back', state: () => ({ pending: outbox.pending() }), isUp: () => log.connected })
 * const outbox = Outbox.open(path, log, { onError: (err) => outage.report(err) })
 */
export class OutageLog {
  readonly #opts: OutageLogOptions
  readonly #everyMs: number
  #since: number | undefined
  #reports = 0
  #lastLogged = 0
  #poll: NodeJS.Timeout | undefined

  constructor(opts: OutageLogOptions) {
    this.#opts = opts
    this.#everyMs = opts.everyMs ?? 30_000
  }

  /** A part met the outage (`err` says how); the first report of an outage logs it. */
  report(err: unknown): void {
    this.#reports++
    if (this.#since !== undefined) return
    const now = Date.now()
    this.#since = now
    this.#lastLogged = now
    this.#reports = 1
    const cause = err instanceof Error && err.cause !== undefined ? { cause: String(err.cause) } : {}
    this.#opts.logger.warn({ err: String(err), ...cause, ...this.#opts.state() }, this.#opts.begins)
    this.#poll = setInterval(() => this.#look(), POLL_MS)
    // An outage is no reason to stay alive.
    this.#poll.unref()
  }

  /** Stop watching (the gateway stops); an outage still running is not said to end. */
  close(): void {
    clearInterval(this.#poll)
    this.#since = undefined
  }

  #look(): void {
    const since = this.#since
    if (since === undefined) return
    const now = Date.now()
    const downForS = Math.round((now - since) / 1000)
    if (this.#opts.isUp()) {
      clearInterval(this.#poll)
      this.#since = undefined
      this.#opts.logger.info({ downForS, ...this.#opts.state() }, this.#opts.ends)
      return
    }
    if (now - this.#lastLogged < this.#everyMs) return
    this.#lastLogged = now
    this.#opts.logger.info({ downForS, failures: this.#reports, ...this.#opts.state() }, this.#opts.lasts)
  }
}

/** What an outage of the event log is judged by, filled in as the gateway opens them. */
export interface EventLogParts {
  log?: { readonly connected: boolean }
  outbox?: { pending(): number; readonly failing: boolean }
}

/**
 * The outage of NATS as the gateway logs it: over once the log is connected and the outbox's
 * appends go through again (connected to a cluster without a stream leader is still out); its state
 * is the events waiting in the outbox.
 */
export function eventLogOutage(logger: Logger, parts: EventLogParts, everyMs: number): OutageLog {
  return new OutageLog({
    logger,
    everyMs,
    begins: 'NATS is unreachable: serving from the last projected state; events wait in the outbox until it is back',
    lasts: 'NATS still unreachable: serving from the last projected state',
    ends: 'NATS is back: the outbox sends the events it kept',
    state: () => ({ eventsWaiting: parts.outbox?.pending() ?? 0 }),
    isUp: () => parts.log?.connected === true && parts.outbox?.failing !== true,
  })
}
