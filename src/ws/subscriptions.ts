import type { Upstreams } from '../upstream/upstreams.js'
import type { UpstreamPool } from '../upstream/pool.js'
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
  /** The shared pool of each network: its hub is the network's. */
  readonly #shared: Map<string, UpstreamPool>
  /** Hubs on the dedicated pools of Private Node accounts, made on first use. */
  readonly #dedicated = new Map<UpstreamPool, SubscriptionHub>()
  readonly #opts: SubscriptionHubOptions

  private constructor(upstreams: Upstreams, opts: SubscriptionHubOptions) {
    this.#opts = opts
    this.#shared = new Map(upstreams.networks().map((network) => [network, upstreams.pool(network)!]))
    this.#hubs = new Map([...this.#shared].map(([network, pool]) => [network, new SubscriptionHub(network, pool.nodes(), opts)]))
  }

  static fromUpstreams(upstreams: Upstreams, opts: SubscriptionHubOptions): Subscriptions {
    return new Subscriptions(upstreams, opts)
  }

  hub(network: string): SubscriptionHub | undefined {
    return this.#hubs.get(network)
  }

  /**
   * The hub for calls that go to `pool`: the network's shared hub for its shared pool, a hub of its
   * own for a Private Node account's dedicated pool (its subscriptions are made on its node).
   */
  hubFor(network: string, pool: UpstreamPool): SubscriptionHub {
    if (this.#shared.get(network) === pool) return this.#hubs.get(network)!
    let hub = this.#dedicated.get(pool)
    if (hub === undefined) {
      hub = new SubscriptionHub(network, pool.nodes(), this.#opts)
      this.#dedicated.set(pool, hub)
    }
    return hub
  }

  /** A dedicated pool was replaced (its nodes are closing): its hub goes with it. */
  retire(pool: UpstreamPool): void {
    this.#dedicated.get(pool)?.close()
    this.#dedicated.delete(pool)
  }

  stats(): SubscriptionHubStats[] {
    return [...this.#hubs.values(), ...this.#dedicated.values()].map((hub) => hub.stats())
  }

  close(): void {
    for (const hub of this.#hubs.values()) hub.close()
    for (const hub of this.#dedicated.values()) hub.close()
    this.#dedicated.clear()
  }
}
