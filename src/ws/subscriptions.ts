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
    // One object every hub reads: a reload's new time-out reaches them all (see retune).
    this.#opts = { ...opts }
    this.#shared = new Map()
    this.#hubs = new Map()
    this.reconfigure(upstreams)
  }

  /**
   * The networks' nodes changed (a reload): each hub serves from its network's nodes now, moving
   * its subscriptions off a dropped node (clients keep their ids); a new network gets a hub. The
   * hub of a removed network stays, with no node: its subscriptions wait, and come back if the
   * network does.
   */
  reconfigure(upstreams: Upstreams): void {
    const networks = new Set(upstreams.networks())
    for (const network of networks) {
      const pool = upstreams.pool(network)!
      this.#shared.set(network, pool)
      const hub = this.#hubs.get(network)
      if (hub === undefined) this.#hubs.set(network, new SubscriptionHub(network, pool.nodes(), this.#opts))
      else hub.setNodes(pool.nodes())
    }
    for (const [network, hub] of this.#hubs) {
      if (networks.has(network)) continue
      this.#shared.delete(network)
      hub.setNodes([])
    }
  }

  /** The time-out of upstream eth_subscribe / eth_unsubscribe from now on (limits.upstreamTimeoutMs at a reload). */
  retune(timeoutMs: number): void {
    this.#opts.timeoutMs = timeoutMs
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
