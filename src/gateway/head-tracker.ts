/**
 * The head block of each network, as its nodes report it: the router compares block numbers with
 * it to send old state to archive nodes. Fed by the node head monitor (src/upstream/node-heads.ts,
 * which polls every node every `health.pollMs`) and by anything else that sees a head; the
 * highest report wins, so a lagging node cannot pull it back.
 */
export class HeadTracker {
  readonly #heads = new Map<string, number>()

  head(network: string): number | undefined {
    return this.#heads.get(network)
  }

  observe(network: string, block: number): void {
    const known = this.#heads.get(network)
    if (known === undefined || block > known) this.#heads.set(network, block)
  }

  /** A reload removed the network: a network of that slug added later starts from its own nodes' heads. */
  forget(network: string): void {
    this.#heads.delete(network)
  }
}
