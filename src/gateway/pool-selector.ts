import type { StateStore } from '../store/state-store.js'
import { UpstreamNode } from '../upstream/node.js'
import { UpstreamPool } from '../upstream/pool.js'
import type { Upstreams, UpstreamsOptions } from '../upstream/upstreams.js'
import type { KeyContext } from './key-directory.js'

/**
 * The pool a key's calls go to on a network. Private Node accounts with a dedicated node attached
 * by the operator (`tollgate nodes attach`, a DedicatedNodeAttached event) get a pool of their own:
 * their dedicated nodes, and the shared nodes only for a node kind they have no dedicated node
 * of (a dedicated full node still leaves trace_* to the shared archive nodes). Until a node is
 * attached they use the shared pool. Every other key uses the shared pool: one Map lookup.
 */
export class PoolSelector {
  /** `accountId|network` → the account's own pool, or null: no dedicated node there. */
  readonly #dedicated = new Map<string, UpstreamPool | null>()
  /** The dedicated nodes each account's pools own (closed when replaced). */
  readonly #owned = new Map<string, UpstreamNode[]>()

  constructor(
    private readonly upstreams: Upstreams,
    private readonly store: StateStore,
    /** What dedicated nodes share with the shared ones: the answer size limit, the failure log. */
    private readonly nodeOptions: Pick<UpstreamsOptions, 'maxAnswerBytes' | 'onNodeFailure'> = {},
    /** A dedicated pool was replaced (its subscriptions hub goes with it). */
    private readonly onRetired: (pool: UpstreamPool) => void = () => undefined,
  ) {}

  poolFor(key: KeyContext, network: string): UpstreamPool | undefined {
    const shared = this.upstreams.pool(network)
    if (shared === undefined || key.plan?.nodes.rule !== 'dedicated') return shared
    const id = `${key.account.accountId}|${network}`
    let pool = this.#dedicated.get(id)
    if (pool === undefined) {
      pool = this.#build(key.account.accountId, network, shared)
      this.#dedicated.set(id, pool)
    }
    return pool ?? shared
  }

  /** The projector applied events of these accounts: rebuild their pools on next use. */
  refresh(accountIds: readonly string[]): void {
    for (const accountId of accountIds) {
      for (const [id, pool] of [...this.#dedicated]) {
        if (!id.startsWith(`${accountId}|`)) continue
        this.#dedicated.delete(id)
        if (pool) this.onRetired(pool)
      }
      const nodes = this.#owned.get(accountId)
      this.#owned.delete(accountId)
      // Calls in flight on the old nodes finish first: close a little later.
      if (nodes) setTimeout(() => void Promise.all(nodes.map((n) => n.close())), 30_000).unref()
    }
  }

  /**
   * A reload dropped these shared nodes: the dedicated pools that borrowed one of them (shared
   * nodes of the kinds they have none of) are made again on next use, as at refresh, so that none
   * keeps a node that is closing. The others are left alone: remaking them would end the
   * subscriptions of their hubs.
   */
  apply(next: { droppedShared: readonly UpstreamNode[] }): void {
    const dropped = next.droppedShared
    if (dropped.length === 0 || this.#dedicated.size === 0) return
    const gone = new Set(dropped)
    const accounts = new Set<string>()
    for (const [id, pool] of this.#dedicated) if (pool?.nodes().some((n) => gone.has(n))) accounts.add(id.slice(0, id.indexOf('|')))
    if (accounts.size > 0) this.refresh([...accounts])
  }

  async close(): Promise<void> {
    const nodes = [...this.#owned.values()].flat()
    this.#owned.clear()
    this.#dedicated.clear()
    await Promise.all(nodes.map((n) => n.close()))
  }

  #build(accountId: string, network: string, shared: UpstreamPool): UpstreamPool | null {
    const attached = this.store.privateNode(accountId)?.attached.filter((a) => a.network === network) ?? []
    if (attached.length === 0) return null
    const { maxAnswerBytes, onNodeFailure } = this.nodeOptions
    const own = attached.map((a, i) => {
      const name = `dedicated:${accountId}:${network}:${a.kind}:${i}`
      return new UpstreamNode({
        name,
        kind: a.kind,
        url: a.url,
        wsUrl: a.ws ?? undefined,
        maxAnswerBytes,
        onFailure: onNodeFailure && ((err, method) => onNodeFailure(network, name, err, method)),
      })
    })
    this.#owned.set(accountId, [...(this.#owned.get(accountId) ?? []), ...own])
    const kinds = new Set(own.map((n) => n.kind))
    const borrowed = shared.nodes().filter((n) => !kinds.has(n.kind))
    return new UpstreamPool(network, [...own, ...borrowed])
  }
}
