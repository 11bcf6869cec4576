import { systemClock, type Clock } from '../../actors/runtime/clock.js'
import { isListedMethod } from './method-missing.js'

/** How long a method a node said it lacks is set aside on that node before one call probes it. */
export const METHOD_SET_ASIDE_MS = 5 * 60_000

/**
 * Methods set aside, each until a time: the methods one node said it does not serve while another
 * node of its kind served them (UpstreamNode.lacking; calls for them go to the other nodes
 * meanwhile), or the methods no node of a kind serves (the pool's own). Once the time is past the
 * next call probes again (a node upgraded or reconfigured serves it again).
 *
 * Only methods of the method table are remembered (isListedMethod), so the map holds at most the
 * table's ~100 names whatever clients send: made-up names (any name in a served namespace reached
 * the nodes, and each took one of 1,024 places on every node) cannot fill it, and a real gap is
 * never forgotten for want of room. Names outside the table are simply asked each time.
 */
export class MethodsLacking {
  readonly #until = new Map<string, number>()
  /**
   * Methods whose time is past and whose probe has not been sent yet. Why: the node the probe is
   * for may score worse than the others (one slow answer of it is all its heavy window holds), and
   * a heavy call is never sent to a node as a probe by score: without this the node was never asked
   * again, and a method it serves again stayed set aside for good.
   */
  readonly #probeDue = new Set<string>()

  constructor(
    /** Changed by a reload (health.methodSetAsideMs): methods set aside before keep their time. */
    public setAsideMs = METHOD_SET_ASIDE_MS,
    private readonly clock: Clock = systemClock,
  ) {}

  /** `method` is lacking: set it aside for `ms` (default setAsideMs); a name outside the table is not remembered. */
  lacks(method: string, ms = this.setAsideMs): void {
    if (!isListedMethod(method)) return
    this.#until.set(method, this.clock.now() + ms)
  }

  /** Whether `method` is set aside now. */
  has(method: string): boolean {
    if (this.#until.size === 0) return false
    const until = this.#until.get(method)
    if (until === undefined) return false
    if (this.clock.now() < until) return true
    // Past its time: the next call is the probe; a second "not found" sets it aside again.
    this.#until.delete(method)
    this.#probeDue.add(method)
    return false
  }

  /**
   * Whether the next call of `method` should probe this node (its set-aside time has just passed);
   * true once per expiry: the caller sends it there.
   */
  takeProbe(method: string): boolean {
    return this.#probeDue.size !== 0 && this.#probeDue.delete(method)
  }

  /** Forget every method (the nodes changed: a reload). */
  clear(): void {
    this.#until.clear()
    this.#probeDue.clear()
  }

  /** Methods set aside now (for /metrics). */
  get size(): number {
    return this.#until.size
  }
}
