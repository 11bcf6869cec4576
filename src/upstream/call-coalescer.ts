import { METHODS } from '../rpc/method-table.js'
import { isUpstreamFailure, UpstreamAnswerTooLarge, UpstreamTimeout } from './errors.js'
import type { HttpTransport } from './http-transport.js'
import { batchText, callText, splitBatchHeads } from './json-rpc-wire.js'

export interface CallCoalescerOptions {
  /** Most calls in one upstream batch (default 20): a batch answers when its slowest call does. 1: every call alone. */
  maxCalls?: number
  /** How long a node that answered a batch with something else than an array gets single calls (default 60 s). */
  refusedForMs?: number
  /** Milliseconds now, for the refusal's minute and a call's time left (a fake clock in tests). */
  now?: () => number
}

/** One call waiting for the batch of this turn. */
interface Waiting {
  readonly method: string
  readonly params: unknown
  readonly timeoutMs: number
  resolve(answer: Buffer | string): void
  reject(err: unknown): void
}

/**
 * The single calls to one node over HTTP in one turn of the event loop, sent as ONE JSON-RPC
 * batch: one HTTP request and one answer to read instead of one per call. undici's request path
 * was a third of the CPU of a call to an HTTP-only node (bench/README.md, session 8), and most
 * providers are reached over HTTP only. A call that is alone in its turn goes alone, as before.
 *
 * What never waits for a batch: the gateway's own polls (`alone`: a node that holds one, say a
 * `finalized` block it never answers, would hold the client calls batched with it), a call not
 * safe to repeat (eth_sendRawTransaction: the pool's failover rules for it are those of a single
 * call), and heavy calls (traces, eth_getLogs, receipts of a whole block): a batch answers when its
 * slowest call does, and a large answer sent alone stays bytes all the way to the client.
 *
 * A node that answers a batch with anything but an array (some refuse batches, or answer a
 * rate-limit error as one object) gets each call of it alone, and single calls for a while.
 * Calls its array did not answer, and every call of a batch whose answer is over the size
 * limit, go again alone. A transport failure or a time-out of the batch fails each of its
 * calls with it: the pool then fails each over as it would a single call.
 */
export class CallCoalescer {
  readonly #http: HttpTransport
  readonly #maxCalls: number
  readonly #refusedForMs: number
  readonly #now: () => number
  #waiting: Waiting[] = []
  #scheduled = false
  #refusedUntil = 0
  /** Batches sent and calls they carried (for /metrics and tests). */
  readonly counters = { batches: 0, batchedCalls: 0 }

  constructor(http: HttpTransport, opts: CallCoalescerOptions = {}) {
    this.#http = http
    this.#maxCalls = opts.maxCalls ?? 20
    this.#refusedForMs = opts.refusedForMs ?? 60_000
    this.#now = opts.now ?? Date.now
  }

  /**
   * Send one call, with the others of this turn when it may wait for them; resolves with the
   * node's answer to it (our id in it), as bytes when it went alone, as text from a batch.
   */
  call(method: string, params: unknown, timeoutMs: number, alone = false): Promise<Buffer | string> {
    if (alone || this.#maxCalls === 1 || !mayWait(method) || (this.#refusedUntil !== 0 && this.#now() < this.#refusedUntil))
      return this.#alone(method, params, timeoutMs)
    return new Promise((resolve, reject) => {
      this.#waiting.push({ method, params, timeoutMs, resolve, reject })
      if (this.#waiting.length >= this.#maxCalls) this.#flush()
      else if (!this.#scheduled) {
        this.#scheduled = true
        setImmediate(this.#onTurnEnd)
      }
    })
  }

  readonly #onTurnEnd = (): void => {
    this.#scheduled = false
    if (this.#waiting.length > 0) this.#flush()
  }

  #flush(): void {
    const calls = this.#waiting
    this.#waiting = []
    if (calls.length === 1) {
      const c = calls[0]
      this.#alone(c.method, c.params, c.timeoutMs).then(c.resolve, c.reject)
    } else {
      void this.#send(calls)
    }
  }

  // async: a call that cannot be written (params JSON.stringify refuses) rejects; from the
  // end-of-turn callback a synchronous throw would be an uncaught exception.
  async #alone(method: string, params: unknown, timeoutMs: number): Promise<Buffer> {
    return this.#http.callBytes(callText(1, method, params), timeoutMs)
  }

  async #send(calls: Waiting[]): Promise<void> {
    this.counters.batches++
    this.counters.batchedCalls += calls.length
    let timeoutMs = 0
    for (const c of calls) if (c.timeoutMs > timeoutMs) timeoutMs = c.timeoutMs
    // A call with less time than the batch (a failover attempt gets what is left) keeps its own.
    const settled = new Array<boolean>(calls.length).fill(false)
    const timers: Array<ReturnType<typeof setTimeout> | undefined> = calls.map((c, i) =>
      c.timeoutMs < timeoutMs
        ? setTimeout(() => {
            settled[i] = true
            c.reject(new UpstreamTimeout({ node: this.#http.name, timeoutMs: c.timeoutMs }))
          }, c.timeoutMs)
        : undefined,
    )
    const settle = (i: number, how: () => void): void => {
      if (settled[i]) return
      settled[i] = true
      clearTimeout(timers[i])
      how()
    }
    // A call sent again alone gets what is left of its time, not all of it again: the pool's
    // deadline for the call counts on each attempt ending within the time it was given.
    const sentAt = this.#now()
    const again = (c: Waiting): void => {
      const left = c.timeoutMs - (this.#now() - sentAt)
      if (left <= 0) c.reject(new UpstreamTimeout({ node: this.#http.name, timeoutMs: c.timeoutMs }))
      else this.#alone(c.method, c.params, left).then(c.resolve, c.reject)
    }
    let answer: string
    try {
      answer = await this.#http.call(batchText(calls, 1), timeoutMs)
    } catch (err) {
      for (let i = 0; i < calls.length; i++) {
        const c = calls[i]
        // Over the size limit together, each may be under it alone (the client asked for no more);
        // a batch that could not be written (one call's params) leaves each call to fail or not alone.
        if (err instanceof UpstreamAnswerTooLarge || !isUpstreamFailure(err)) settle(i, () => again(c))
        else settle(i, () => c.reject(err))
      }
      return
    }
    const elements = splitBatchHeads(answer)
    if (elements === undefined) this.#refusedUntil = this.#now() + this.#refusedForMs
    const answers = new Array<string | undefined>(calls.length)
    // An unreadable element is left out: its call goes again alone.
    for (const { id, text } of elements ?? []) if (typeof id === 'number' && id >= 1 && id <= calls.length) answers[id - 1] = text
    for (let i = 0; i < calls.length; i++) {
      const c = calls[i]
      const text = answers[i]
      settle(i, text !== undefined ? () => c.resolve(text) : () => again(c))
    }
  }
}

/** May this method wait for the batch of its turn (see CallCoalescer). */
function mayWait(method: string): boolean {
  const spec = METHODS[method]
  return spec !== undefined && spec.heavy !== true && spec.path !== 'send'
}
