import type { Logger } from 'pino'
import { systemClock, type Clock } from '../../actors/runtime/clock.js'
import type { GatewayError } from '../errors/registry.js'
import { NoHealthyUpstream, UpstreamTransportError } from '../upstream/errors.js'

export interface FaultLogOptions {
  clock?: Clock
  /** Lines a second per kind of fault (default 10); past it they are counted, and said once. */
  burst?: number
  /** The window of `burst`, in ms (default 1000). */
  windowMs?: number
}

/** Where a 5xx answer was given: the call it answers. */
export interface ServerErrorContext {
  network: string
  /** The call's method; for an upstream batch, its methods, comma-separated. */
  method: string
  /** Calls answered with it at once (a batch sent to one node as one upstream batch). */
  calls?: number
}

/** One kind of fault in the current window: lines written, lines held back, the last one held back. */
interface Window {
  start: number
  written: number
  held: number
  level: 'warn' | 'error'
  fields: Record<string, unknown>
  msg: string
  timer: NodeJS.Timeout | undefined
}

/**
 * The gateway's log of faults: each failure a node causes (which node did what) and each 5xx the
 * gateway answers (code, network, node, the underlying error), at `warn` (`error` for a fault of
 * the gateway itself). Never an API key: nothing here is given one.
 *
 * Bounded per kind of fault (a node; a code on a network): with every node of a network down, each
 * request is a 503, and one line per request at 10,000 requests a second would bury everything
 * else and cost more than the requests. So past `burst` lines in a window, the rest are counted
 * and written as one line (the last of them, with `repeated`) when the window ends. Nothing here
 * runs for a call that succeeds.
 */
export class FaultLog {
  readonly #logger: Pick<Logger, 'warn' | 'error'>
  readonly #clock: Clock
  readonly #burst: number
  readonly #windowMs: number
  /** By kind of fault; the keys come from the config (networks, nodes) and the registry (codes), so they are bounded. */
  readonly #windows = new Map<string, Window>()

  constructor(logger: Pick<Logger, 'warn' | 'error'>, opts: FaultLogOptions = {}) {
    this.#logger = logger
    this.#clock = opts.clock ?? systemClock
    this.#burst = opts.burst ?? 10
    this.#windowMs = opts.windowMs ?? 1000
  }

  /**
   * A failure counted against a node (a transport failure, a time-out, garbage, an answer too large).
   * @param method the call it failed, undefined when no call was waiting (garbage on its WebSocket)
   */
  readonly nodeFailed = (network: string, node: string, err: UpstreamTransportError, method: string | undefined): void => {
    const fields = { network, node, method, fault: err.name, what: err.what, err: err.message }
    this.#write(
      'warn',
      `node|${network}|${node}`,
      fields,
      `node ${node} of ${network} ${method === undefined ? 'sent garbage' : `failed ${method}`}: ${err.what}`,
    )
  }

  /** A 5xx answer the gateway gives a client, with its cause. */
  readonly answered = (e: GatewayError, at: ServerErrorContext): void => {
    const cause = e.cause
    const node = cause instanceof UpstreamTransportError ? cause.node : undefined
    const fields: Record<string, unknown> = { status: e.http, code: e.code, rpc: e.rpc, network: at.network, method: at.method, node }
    if (at.calls !== undefined) fields.calls = at.calls
    if (cause instanceof NoHealthyUpstream) fields.why = cause.why
    else if (cause !== undefined) fields.err = cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause)
    this.#write(e.http === 500 ? 'error' : 'warn', `answer|${e.code}|${at.network}`, fields, `answered ${e.http} ${e.code} on ${at.network}: ${e.message}`)
  }

  #write(level: 'warn' | 'error', key: string, fields: Record<string, unknown>, msg: string): void {
    const now = this.#clock.now()
    let w = this.#windows.get(key)
    if (w === undefined || now - w.start >= this.#windowMs) {
      if (w !== undefined) this.#flush(w)
      w = { start: now, written: 0, held: 0, level, fields, msg, timer: undefined }
      this.#windows.set(key, w)
    }
    if (w.written < this.#burst) {
      w.written++
      this.#logger[level](fields, msg)
      return
    }
    w.held++
    w.level = level
    w.fields = fields
    w.msg = msg
    if (w.timer === undefined) {
      const window = w
      window.timer = setTimeout(() => this.#flush(window), this.#windowMs - (now - w.start))
      window.timer.unref()
    }
  }

  /** The lines held back in a window, as one. */
  #flush(w: Window): void {
    clearTimeout(w.timer)
    w.timer = undefined
    if (w.held === 0) return
    this.#logger[w.level]({ ...w.fields, repeated: w.held }, `${w.msg} (${w.held} times more within ${this.#windowMs} ms)`)
    w.held = 0
  }
}
