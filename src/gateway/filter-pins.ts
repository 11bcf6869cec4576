import type { Clock } from '../../actors/runtime/clock.js'

/**
 * Filters (eth_newFilter, eth_newBlockFilter, eth_newPendingTransactionFilter) live on the node
 * that created them: asked elsewhere, eth_getFilterChanges answers "filter not found". So each
 * filter id is pinned to its node and to the key that created it (another key must not read it).
 * Nodes drop idle filters after 5 minutes (geth's default); the pins expire the same way.
 */
export const FILTER_IDLE_MS = 5 * 60_000
/** Bound on pins kept: a key creating filters in a loop must not grow memory without end. */
const MAX_FILTER_PINS = 100_000

interface Pin {
  node: string
  keyId: string
  lastUsed: number
}

export class FilterPins {
  readonly #pins = new Map<string, Pin>()
  constructor(private readonly clock: Clock) {}

  pin(network: string, filterId: string, node: string, keyId: string): void {
    if (this.#pins.size >= MAX_FILTER_PINS) this.sweep()
    if (this.#pins.size >= MAX_FILTER_PINS) {
      // Still full of live filters: forget the oldest (Map keeps insertion order).
      const oldest = this.#pins.keys().next().value
      if (oldest !== undefined) this.#pins.delete(oldest)
    }
    this.#pins.set(`${network}|${filterId.toLowerCase()}`, { node, keyId, lastUsed: this.clock.now() })
  }

  /** The node holding the filter, when this key created it and it has not expired. */
  nodeOf(network: string, filterId: unknown, keyId: string): string | undefined {
    if (typeof filterId !== 'string') return undefined
    const pin = this.#pins.get(`${network}|${filterId.toLowerCase()}`)
    if (!pin || pin.keyId !== keyId) return undefined
    const now = this.clock.now()
    if (now - pin.lastUsed > FILTER_IDLE_MS) return undefined
    pin.lastUsed = now
    return pin.node
  }

  unpin(network: string, filterId: unknown): void {
    if (typeof filterId === 'string') this.#pins.delete(`${network}|${filterId.toLowerCase()}`)
  }

  sweep(): void {
    const now = this.clock.now()
    for (const [k, pin] of this.#pins) if (now - pin.lastUsed > FILTER_IDLE_MS) this.#pins.delete(k)
  }

  get size(): number {
    return this.#pins.size
  }
}
