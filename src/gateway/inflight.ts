import { spliceId } from '../upstream/splice-id.js'
import { paramsJson } from '../rpc/params-json.js'

/** What an in-flight call resolves with: at least a body carrying some client's id. */
export interface SharedAnswer {
  body: string
}

/**
 * Identical calls in flight at the same time (same network, node kind, method and params) are
 * sent upstream once: the first caller's call is shared, and every other caller gets the same
 * answer with its own id spliced in. A thousand clients polling the same block at the same moment
 * cost the node one call. Only calls whose answer does not depend on who asks belong here: not
 * filter calls (a filter's changes are consumed by the call that reads them).
 * @example
 * const reply = await inflight.run(`eth-1|full|eth_getBlockByNumber|["0x10",false]`, '7', () => pool.call(…))
 */
export class InflightCalls<T extends SharedAnswer> {
  readonly #pending = new Map<string, Promise<T>>()
  readonly #withId: (answer: T, idJson: string) => T

  /**
   * @param withId the answer for another client (default: its body with that client's id
   *   spliced in); the upstream caller passes the pool's, which keeps answers held as bytes as bytes
   */
  constructor(withId?: (answer: T, idJson: string) => T) {
    this.#withId = withId ?? ((answer, idJson) => ({ ...answer, body: spliceId(answer.body, idJson) }))
  }
  /** Calls answered by another caller's upstream call, since start. */
  shared = 0

  /**
   * Run `send` unless an identical call is in flight; either way resolve with `idJson` in the body.
   * Not async: the first caller gets the sender's own promise, with no promise or object more per
   * call on the request path.
   */
  run(key: string, idJson: string, send: () => Promise<T>): Promise<T> {
    const running = this.#pending.get(key)
    if (running !== undefined) {
      this.shared++
      return running.then((answer) => this.#withId(answer, idJson))
    }
    const call = send()
    this.#pending.set(key, call)
    // Registered before the caller's own reaction: the entry is gone when the caller resumes.
    const done = (): void => {
      this.#pending.delete(key)
    }
    call.then(done, done)
    // The first caller gets the sender's own object (not a copy): the pool recognises its
    // answers kept as bytes by identity (bytesOf), and those bytes carry this caller's id.
    return call
  }

  /** Distinct calls in flight now. */
  get size(): number {
    return this.#pending.size
  }
}

/** The key that makes two calls identical. */
export function inflightKey(network: string, kind: string, method: string, params: unknown): string {
  return `${network}|${kind}|${method}|${paramsJson(params)}`
}

/** inflightKey, for params already written as JSON. */
export function inflightKeyOf(network: string, kind: string, method: string, paramsJsonText: string): string {
  return `${network}|${kind}|${method}|${paramsJsonText}`
}
