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
  /** The gateway's networks: the same object through reloads, its pools given their new nodes. */
  readonly #upstreams: Upstreams

  private constructor(upstreams: Upstreams, opts: SubscriptionHubOptions) {
    this.#upstreams = upstreams
    // One object every hub reads: a reload's new time-out reaches them all (see apply).
    this.#opts = { ...opts }
    this.#shared = new Map()
    this.#hubs = new Map()
    this.#serve()
  }

  /**
   * A reload, once the networks' pools have their new nodes: the hubs follow them, and the
   * time-out of upstream eth_subscribe / eth_unsubscribe (limits.upstreamTimeoutMs) holds from now on.
   */
  apply(next: { timeoutMs: number }): void {
    this.#serve()
    this.#opts.timeoutMs = next.timeoutMs
  }

  /**
   * The networks' nodes changed (a reload): each hub serves from its network's nodes now, moving
   * its subscriptions off a dropped node (clients keep their ids); a new network gets a hub. The
   * hub of a removed network stays, with no node: its subscriptions wait, and come back if the
   * network does.
   */
  #serve(): void {
    const upstreams = this.#upstreams
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
