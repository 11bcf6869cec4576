import type { Clock } from './clock.js'

export interface ActorRegistryOptions<K, A> {
  /** Activates the actor of `key` on its first use (durable facts come from the host). */
  create: (key: K) => A
  clock: Clock
  /** An actor not used for longer than this is passivated by `sweep()`. */
  idleMs: number
  /** Called for each actor `sweep()` passivates, e.g. to flush its counters. */
  passivate?: (actor: A, key: K) => void
  /**
   * Whether an idle actor may be passivated now. An actor that still owns live things (open
   * WebSocket connections, a cooldown in progress) must stay: passivating it would forget them
   * and a new activation would start with fresh, full limits.
   */
  canPassivate?: (actor: A, key: K) => boolean
}

interface Entry<A> {
  actor: A
  lastUsed: number
}

/**
 * Actors by key: activated on first use, passivated after idle time. The registry sets no
 * timer of its own (a timer would keep tests and short-lived commands alive): the host calls
 * `sweep()` on its own schedule.
 *
 * @example
 * const keys = new ActorRegistry({ create: (id) => new AccountActor(load(id), clock), clock, idleMs: 60_000 })
 * keys.get(keyId).charge('full', { calls: 1 })
 */
export class ActorRegistry<K, A> {
  readonly #entries = new Map<K, Entry<A>>()
  readonly #options: ActorRegistryOptions<K, A>

  constructor(options: ActorRegistryOptions<K, A>) {
    if (!(options.idleMs > 0)) throw new RangeError(`idleMs must be > 0, got ${options.idleMs}`)
    this.#options = options
  }

  /** The actor of `key`, activated if needed; marks it used now. */
  get(key: K): A {
    const now = this.#options.clock.now()
    const entry = this.#entries.get(key)
    if (entry !== undefined) {
      entry.lastUsed = now
      return entry.actor
    }
    const actor = this.#options.create(key)
    this.#entries.set(key, { actor, lastUsed: now })
    return actor
  }

  /** The actor of `key` if it is active, without activating it or marking it used. */
  peek(key: K): A | undefined {
    return this.#entries.get(key)?.actor
  }

  has(key: K): boolean {
    return this.#entries.has(key)
  }

  /** Forget the actor of `key` without the passivate hook (a revoked key, a failed actor). */
  delete(key: K): boolean {
    return this.#entries.delete(key)
  }

  /**
   * Passivate every actor idle for longer than `idleMs` (and allowed by `canPassivate`).
   * Returns how many were passivated.
   */
  sweep(): number {
    const { clock, idleMs, passivate, canPassivate } = this.#options
    const now = clock.now()
    let count = 0
    for (const [key, entry] of this.#entries) {
      if (now - entry.lastUsed <= idleMs) continue
      if (canPassivate !== undefined && !canPassivate(entry.actor, key)) continue
      this.#entries.delete(key)
      passivate?.(entry.actor, key)
      count++
    }
    return count
  }

  forEach(fn: (actor: A, key: K) => void): void {
    for (const [key, entry] of this.#entries) fn(entry.actor, key)
  }

  get size(): number {
    return this.#entries.size
  }
}
