import type { HttpResponse } from './uws.js'

/**
 * A drained front end stays open this long with no exchange before its sockets are closed: a
 * client that was between two calls when the drain began sends its next one now, and gets it
 * answered (with `Connection: close`) instead of finding its kept-alive socket reset.
 */
const DRAIN_QUIET_MS = 100

/** Per-request state the handlers keep: uWS forbids touching `res` after it was aborted. */
export interface ResponseState {
  aborted: boolean
  done: boolean
  /** A HEAD request: the answer's headers and length are written, its body is not. */
  head: boolean
  /** The front end's count of open exchanges, told when this one ends. */
  readonly exchanges: Exchanges
  /** Counted as open by `exchanges` (until its answer is written or the client aborted). */
  open: boolean
}

/**
 * The HTTP exchanges (request → answer) of one front end that are still open, and whether the
 * front end is draining. A graceful shutdown waits for the open ones to be answered before it
 * closes the sockets that are left (idle keep-alive connections), and while it drains every answer
 * carries `Connection: close`, so that a client's next call goes to another instance instead of
 * to a socket about to close.
 */
export class Exchanges {
  #open = 0
  #draining = false
  #idle: Array<() => void> = []

  /** Exchanges begun and not yet answered or aborted. */
  get open(): number {
    return this.#open
  }

  get draining(): boolean {
    return this.#draining
  }

  /**
   * A new exchange on `res`; attaches the abort handler (uWS aborts the process when a handler
   * returns without answering or attaching one, so every route begins here).
   */
  begin(res: HttpResponse, head?: boolean): ResponseState
  /** With `extra`: the route's own per-request fields in the same object (one allocation per request). */
  begin<E extends object>(res: HttpResponse, head: boolean, extra: E): ResponseState & E
  begin(res: HttpResponse, head = false, extra?: object): ResponseState {
    const state: ResponseState = { aborted: false, done: false, head, exchanges: this, open: true, ...extra }
    this.#open++
    res.onAborted(() => {
      state.aborted = true
      this.ended(state)
    })
    return state
  }

  /** The exchange of `state` is over: its answer is written, or the client went away. */
  ended(state: ResponseState): void {
    if (!state.open) return
    state.open = false
    this.#open--
    if (this.#open === 0 && this.#idle.length > 0) {
      const waiting = this.#idle
      this.#idle = []
      for (const resolve of waiting) resolve()
    }
  }

  /** From now on every answer closes its connection. */
  drain(): void {
    this.#draining = true
  }

  /** Resolves when no exchange is open (at once if none is). */
  idle(): Promise<void> {
    if (this.#open === 0) return Promise.resolve()
    return new Promise((resolve) => this.#idle.push(resolve))
  }

  /** Resolves true once no exchange has been open for DRAIN_QUIET_MS, false at `deadline` (ms since the epoch). */
  async quiet(deadline: number): Promise<boolean> {
    for (;;) {
      const left = deadline - Date.now()
      if (left <= 0) return false
      let timer: NodeJS.Timeout | undefined
      const timeUp = new Promise<void>((resolve) => (timer = setTimeout(resolve, left)))
      await Promise.race([this.idle(), timeUp])
      clearTimeout(timer)
      if (this.#open > 0) return false
      await new Promise((resolve) => setTimeout(resolve, Math.min(DRAIN_QUIET_MS, Math.max(0, deadline - Date.now()))))
      if (this.#open === 0) return true
    }
  }
}
