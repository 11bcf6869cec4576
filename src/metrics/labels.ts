import { METHODS } from '../rpc/method-table.js'

/**
 * The label value of everything outside the fixed sets below. A label value is a time series that
 * lives as long as the process: one taken from the request (a network slug in /http/<slug>, a
 * method name) would let a client without a key grow our memory and every scrape without bound.
 */
export const OTHER = 'other'

/**
 * Network label values: a configured network's slug, anything else `other`.
 * @example
 * const networks = new NetworkLabels(['eth-1'])
 * networks.of('eth-1') // 'eth-1'
 * networks.of('x'.repeat(64)) // 'other'
 */
export class NetworkLabels {
  readonly #configured: Set<string>
  readonly #onAdded: Array<(label: string) => void> = []

  constructor(configured: Iterable<string>) {
    this.#configured = new Set(configured)
  }

  /**
   * A reload configured these networks: the new ones get their label (told to `onAdded` first, so
   * that counters made per label have it before it is counted). A removed network keeps its label:
   * its series keep their counts, and the set still only grows with the config, never with requests.
   */
  add(networks: Iterable<string>): void {
    for (const network of networks) {
      if (this.#configured.has(network)) continue
      for (const listener of this.#onAdded) listener(network)
      this.#configured.add(network)
    }
  }

  /** Call `listener` with each label a reload adds (see add). */
  onAdded(listener: (label: string) => void): void {
    this.#onAdded.push(listener)
  }

  /** The configured slugs and `other`: every value `of` can return. */
  get values(): string[] {
    return [...this.#configured, OTHER]
  }

  of(network: string): string {
    return this.#configured.has(network) ? network : OTHER
  }
}

/** Method label value: a method of the method table, anything else `other`. */
export function methodLabel(method: string): string {
  return Object.hasOwn(METHODS, method) ? method : OTHER
}
