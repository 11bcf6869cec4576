import type { Answer } from '../upstream/answer.js'

/**
 * Identical calls in flight at the same time (same network, node kind, method and params) are
 * sent upstream once: the first caller's call is shared, and every other caller gets the same
 * answer with its own id spliced in. A thousand clients polling the same block at the same moment
 * cost the node one call. Only calls whose answer does not depend on who asks belong here: not
 * filter calls (a filter's changes are consumed by the call that reads them).
 * @example
 * const reply = await inflight.run(`eth-1|full|eth_getBlockByNumber|["0x10",false]`, '7', () => pool.call(…))
 */
export class InflightCalls {
  readonly #pending = new Map<string, Promise<Answer> | BatchSlot>()
  /** Calls answered by another caller's upstream call, since start. */
  shared = 0

  /**
   * Run `send` unless an identical call is in flight; either way resolve with `idJson` in the body.
   * Not async: the first caller gets the sender's own promise, with no promise or object more per
   * call on the request path.
   */
  run(key: string, idJson: string, send: () => Promise<Answer>): Promise<Answer> {
    const running = this.#pending.get(key)
    if (running !== undefined) {
      this.shared++
      if (running instanceof Promise) return running.then((answer) => joined(answer, idJson))
      // A call of an upstream batch: its answer, or (the node's answer skipped it) a call of our own.
      return running.answers.then((all) => {
        const answer = all[running.index]
        return answer === undefined ? send() : joined(answer, idJson)
      })
    }
    const call = send()
    this.#pending.set(key, call)
    // Registered before the caller's own reaction: the entry is gone when the caller resumes.
    const done = (): void => {
      this.#pending.delete(key)
    }
    call.then(done, done)
    // The first caller gets the sender's own answer (not a copy): it carries this caller's id.
    return call
  }

  /** An identical call is in flight: run() would join it. */
  has(key: string): boolean {
    return this.#pending.has(key)
  }

  /**
   * The calls of one upstream batch, in flight under their keys until `answers` settles (one
   * entry and one reaction for the batch, not a promise per call: a batch of 50 distinct calls
   * paid more for its promises than for the call). A key already in flight keeps its call.
   */
  shareBatch(keys: readonly string[], answers: Promise<ReadonlyArray<Answer | undefined>>): void {
    for (let i = 0; i < keys.length; i++) if (!this.#pending.has(keys[i])) this.#pending.set(keys[i], { answers, index: i })
    const done = (): void => {
      for (const key of keys) {
        const entry = this.#pending.get(key)
        if (entry !== undefined && !(entry instanceof Promise) && entry.answers === answers) this.#pending.delete(key)
      }
    }
    answers.then(done, done)
  }

  /** Distinct calls in flight now. */
  get size(): number {
    return this.#pending.size
  }
}

/** A call in flight as part of an upstream batch: the batch's answers and its place in them. */
interface BatchSlot {
  readonly answers: Promise<ReadonlyArray<Answer | undefined>>
  readonly index: number
}

/** The key that makes two calls identical, their params written as JSON (GatewayCall.paramsJson). */
export function inflightKeyOf(network: string, kind: string, method: string, paramsJsonText: string): string {
  return `${network}|${kind}|${method}|${paramsJsonText}`
}

/**
 * A joiner's copy of the answer: its own id, and none of the work the gateway did for it
 * (Answer.extraUnits): that was the first caller's call, charged to it once.
 */
function joined(answer: Answer, idJson: string): Answer {
  const mine = answer.withId(idJson)
  mine.extraUnits = 0
  return mine
}
