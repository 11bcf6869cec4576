/**
 * A mailbox: messages handled one at a time, in arrival order, so that an `await` inside one
 * handler can never interleave with the next message of the same actor.
 */

/** What a mailbox is doing: `idle` (nothing queued), `busy` (handling), `failed` (stopped). */
export type MailboxStatus = 'idle' | 'busy' | 'failed'

/** Handles one message; may return a promise, and the next message waits for it to settle. */
export type MailboxHandler<M> = (msg: M) => void | Promise<void>

export interface MailboxOptions<M> {
  /**
   * Told about the error that failed the mailbox and the message whose handler threw. Called
   * once, from inside the loop; an error it throws is swallowed (it must not break the loop).
   */
  onError?: (error: unknown, msg: M) => void
}

/**
 * Processes messages one at a time with `handler`.
 *
 * - A synchronous handler and an empty mailbox: the message is handled inline, inside `send()`
 *   (the request path admits a call without paying for a microtask).
 * - A handler returning a promise holds the following messages until it settles.
 * - An error thrown (or a rejection) never escapes to the sender: the status becomes `failed`,
 *   `onError` is told, and the mailbox stops. The actor's state may be half-updated after a
 *   throw, so carrying on could make decisions on a broken state; the host replaces a failed
 *   actor (e.g. `registry.delete(key)` then `get(key)`) instead. Queued and later messages are
 *   dropped (`send` returns false).
 *
 * @example
 * const box = new Mailbox<number>((n) => { total += n }, { onError: (e) => log.error(e) })
 * box.send(1) // handled before send() returns
 */
export class Mailbox<M> {
  readonly #handler: MailboxHandler<M>
  readonly #onError: ((error: unknown, msg: M) => void) | undefined
  // An array with a moving head: shift() on a long array is O(n).
  #queue: M[] = []
  #head = 0
  #status: MailboxStatus = 'idle'
  #idleWaiters: Array<() => void> = []

  constructor(handler: MailboxHandler<M>, options: MailboxOptions<M> = {}) {
    this.#handler = handler
    this.#onError = options.onError
  }

  get status(): MailboxStatus {
    return this.#status
  }

  /** Messages waiting (not counting the one being handled). */
  get size(): number {
    return this.#queue.length - this.#head
  }

  /**
   * Enqueue a message. Returns false when the mailbox has failed and the message is dropped.
   * Never throws because of the handler.
   */
  send(msg: M): boolean {
    if (this.#status === 'failed') return false
    this.#queue.push(msg)
    // A send from inside a handler (busy) only queues: the running loop picks it up next.
    if (this.#status === 'idle') this.#drain()
    return true
  }

  /** Resolves when nothing is queued or being handled (or the mailbox has failed). */
  idle(): Promise<void> {
    if (this.#status !== 'busy') return Promise.resolve()
    return new Promise((resolve) => this.#idleWaiters.push(resolve))
  }

  #drain(): void {
    this.#status = 'busy'
    while (this.#head < this.#queue.length) {
      const msg = this.#take()
      let result: void | Promise<void>
      try {
        result = this.#handler(msg)
      } catch (error) {
        this.#fail(error, msg)
        return
      }
      if (isThenable(result)) {
        result.then(
          () => this.#drain(),
          (error: unknown) => this.#fail(error, msg),
        )
        return
      }
    }
    this.#status = 'idle'
    this.#wakeIdle()
  }

  #take(): M {
    const msg = this.#queue[this.#head]
    this.#queue[this.#head] = undefined as M // let the message be collected
    this.#head++
    if (this.#head === this.#queue.length) {
      this.#queue = []
      this.#head = 0
    } else if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head)
      this.#head = 0
    }
    return msg
  }

  #fail(error: unknown, msg: M): void {
    this.#status = 'failed'
    this.#queue = []
    this.#head = 0
    try {
      this.#onError?.(error, msg)
    } catch {
      // The reporter failing must not turn into an unhandled error inside the loop.
    }
    this.#wakeIdle()
  }

  #wakeIdle(): void {
    const waiters = this.#idleWaiters
    this.#idleWaiters = []
    for (const wake of waiters) wake()
  }
}

function isThenable(value: unknown): value is Promise<void> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function'
}
