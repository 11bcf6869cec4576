/**
 * The request-body time-out (`limits.bodyTimeoutMs`): a request whose body has not fully arrived
 * that long after its headers is answered 408 and its connection closed, as nginx does with
 * `client_body_timeout`. Without it a client that announces a Content-Length and sends less, or
 * sends a byte a second, holds a socket and a buffer until uWebSockets.js drops the connection
 * after 8 to 12 s, without an answer that says why.
 *
 * One sweep over the requests still reading, a few times per time-out, rather than a timer per
 * request. A request first joins a list that is looked at once the current I/O is handled
 * (setImmediate): a body that came with its headers (every small call) is complete by then and
 * the request is forgotten at once. Keeping every request until the next sweep instead held tens
 * of thousands of finished requests alive under load: they outlived the young generation, and in
 * the small-call benchmark the gateway used 9% more CPU per call and 60 MiB more memory.
 */
export interface PendingBody {
  /** Set by the request when its body has been read (or refused): the sweep then forgets it. */
  bodyDone: boolean
  /** The client went away: nothing more to answer. */
  aborted: boolean
  /** The sweep from which on the body is late (set by track). */
  dueSweep: number
}

/** Sweeps per time-out: a late body is answered between 1 and 1 + 1/SWEEPS time-outs after its headers. */
const SWEEPS = 8

export class BodyDeadlines<P extends PendingBody> {
  readonly timeoutMs: number
  readonly #sweepMs: number
  readonly #expire: (pending: P) => void
  /** Requests tracked during the current turn of the event loop. */
  #fresh: P[] = []
  #settling = false
  /** Requests whose body was still arriving after the turn they started in. */
  #pending: P[] = []
  #sweeps = 0
  #timer: NodeJS.Timeout | undefined

  /** `expire` answers a request whose body is late (once; it is marked bodyDone first). */
  constructor(timeoutMs: number, expire: (pending: P) => void) {
    this.timeoutMs = timeoutMs
    this.#sweepMs = Math.max(10, Math.ceil(timeoutMs / SWEEPS))
    this.#expire = expire
  }

  /** Watch a request whose body is being read. Allocates nothing per request: its own state is kept. */
  track(pending: P): void {
    pending.dueSweep = this.#sweeps + SWEEPS + 1
    this.#fresh.push(pending)
    if (!this.#settling) {
      this.#settling = true
      setImmediate(this.#settle)
    }
  }

  /** After the I/O that brought them: keep only the requests whose body is still arriving. */
  readonly #settle = (): void => {
    this.#settling = false
    for (const p of this.#fresh) if (!p.bodyDone && !p.aborted) this.#pending.push(p)
    this.#fresh.length = 0
    if (this.#pending.length > 0 && this.#timer === undefined) {
      this.#timer = setInterval(() => this.#sweep(), this.#sweepMs)
      // The sweep keeps no process alive; it stops by itself when nothing is being read.
      this.#timer.unref()
    }
  }

  #sweep(): void {
    const sweep = ++this.#sweeps
    const still: P[] = []
    for (const p of this.#pending) {
      if (p.bodyDone || p.aborted) continue
      if (p.dueSweep <= sweep) {
        p.bodyDone = true
        this.#expire(p)
      } else still.push(p)
    }
    this.#pending = still
    if (still.length === 0) {
      clearInterval(this.#timer)
      this.#timer = undefined
    }
  }
}
