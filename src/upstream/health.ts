import { systemClock, type Clock } from '../../actors/runtime/clock.js'

export interface NodeHealthOptions {
  /** Consecutive transport failures that take a node out (default 3). */
  failureThreshold?: number
  /** How long a node stays out before one call may probe it (default 5 s). */
  cooldownMs?: number
  clock?: Clock
}

/**
 * A node's health as a small circuit breaker: up; out for a cooldown after `failureThreshold`
 * consecutive transport failures; then one call at a time may probe it, and the first success
 * lets it in again. A JSON-RPC error answered by the node is a success here: the node works.
 */
export class NodeHealth {
  readonly #threshold: number
  readonly #cooldownMs: number
  readonly #clock: Clock
  #consecutiveFailures = 0
  /** 0 while up; else the time the cooldown ends. */
  #outUntil = 0
  /** A probe call is in flight: others keep away until it tells (one bad node, one wasted call). */
  #probing = false

  constructor(opts: NodeHealthOptions = {}) {
    this.#threshold = opts.failureThreshold ?? 3
    this.#cooldownMs = opts.cooldownMs ?? 5_000
    this.#clock = opts.clock ?? systemClock
  }

  /** May a call be sent to this node now (up, or out with its cooldown over and no probe running)? */
  available(): boolean {
    if (this.#outUntil === 0) return true
    return !this.#probing && this.#clock.now() >= this.#outUntil
  }

  /** The node is up (not out and not being probed). */
  up(): boolean {
    return this.#outUntil === 0
  }

  /** A call is being sent; when the node is out and cooling down is over, this call is the probe. */
  begin(): void {
    if (this.#outUntil !== 0 && !this.#probing && this.#clock.now() >= this.#outUntil) this.#probing = true
  }

  succeeded(): void {
    this.#consecutiveFailures = 0
    this.#outUntil = 0
    this.#probing = false
  }

  failed(): void {
    this.#consecutiveFailures++
    if (this.#probing) {
      this.#probing = false
      this.#outUntil = this.#clock.now() + this.#cooldownMs
    } else if (this.#outUntil === 0 && this.#consecutiveFailures >= this.#threshold) {
      this.#outUntil = this.#clock.now() + this.#cooldownMs
    }
  }
}
