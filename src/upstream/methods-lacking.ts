import { systemClock, type Clock } from '../../actors/runtime/clock.js'

/** How long a method a node said it lacks is set aside on that node before one call probes it. */
export const METHOD_SET_ASIDE_MS = 5 * 60_000

/**
 * Entries kept at most: methods outside the method table reach the nodes too (any name in a
 * served namespace), and a client must not grow this map with made-up names. Past it, a new
 * name is not remembered (its calls then each try the nodes in turn, as before).
 */
const MAX_ENTRIES = 1_024

/**
 * The methods one node said it does not serve ("method not found", "not supported"), each set
 * aside until a time: calls for it go to the other nodes of the kind meanwhile, and once the time
 * is past the next call probes the node again (a node upgraded or reconfigured serves it again).
 * A few entries a node as a rule: the methods clients use that this node lacks.
 */
export class MethodsLacking {
  readonly #until = new Map<string, number>()

  constructor(
    /** Changed by a reload (health.methodSetAsideMs): methods set aside before keep their time. */
    public setAsideMs = METHOD_SET_ASIDE_MS,
    private readonly clock: Clock = systemClock,
  ) {}

  /** The node said it lacks `method`: set it aside. */
  lacks(method: string): void {
    const now = this.clock.now()
    if (this.#until.size >= MAX_ENTRIES && !this.#until.has(method)) {
      for (const [m, until] of this.#until) if (until <= now) this.#until.delete(m)
      if (this.#until.size >= MAX_ENTRIES) return
    }
    this.#until.set(method, now + this.setAsideMs)
  }

  /** Whether `method` is set aside on this node now. */
  has(method: string): boolean {
    if (this.#until.size === 0) return false
    const until = this.#until.get(method)
    if (until === undefined) return false
    if (this.clock.now() < until) return true
    // Past its time: the next call is the probe; a second "not found" sets it aside again.
    this.#until.delete(method)
    return false
  }

  /** Methods set aside now (for /metrics). */
  get size(): number {
    return this.#until.size
  }
}
