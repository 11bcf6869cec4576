import type { Upstreams } from '../upstream/upstreams.js'
import { SubscriptionHub, type SubscriptionHubOptions, type SubscriptionHubStats } from './subscription-hub.js'

/**
 * The SubscriptionHub of every configured network, created at start so that each hub hears its
 * nodes' sockets open and close from the first moment.
 * @example
 * const subscriptions = Subscriptions.fromUpstreams(upstreams, { timeoutMs: 10_000 })
 * subscriptions.hub('eth-1')?.stats().upstream.newHeads // 1, however many clients
 */
export class Subscriptions {
  readonly #hubs: Map<string, SubscriptionHub>

  constructor(hubs: Iterable<SubscriptionHub>) {
    this.#hubs = new Map([...hubs].map((hub) => [hub.network, hub]))
  }

  static fromUpstreams(upstreams: Upstreams, opts: SubscriptionHubOptions): Subscriptions {
    return new Subscriptions(upstreams.networks().map((network) => new SubscriptionHub(network, upstreams.pool(network)!.nodes(), opts)))
  }

  hub(network: string): SubscriptionHub | undefined {
    return this.#hubs.get(network)
  }

  stats(): SubscriptionHubStats[] {
    return [...this.#hubs.values()].map((hub) => hub.stats())
  }

  close(): void {
    for (const hub of this.#hubs.values()) hub.close()
  }
}
