import type { NodeKind } from '../core/node-kind.js'
import type { UpstreamNode } from '../upstream/node.js'
import type { WsTransport } from '../upstream/ws-transport.js'
import { type LogsFilterCaps, type LogsFilterHolder, type LogsFilterLimit, LogsFilterQuota, type LogsFilterRefused } from './logs-filter-quota.js'
import { newSubscriptionId, subscriptionIdOf, subscriptionIdSpan } from './subscription-ids.js'
import { SubscriptionNodes } from './subscription-nodes.js'
import type { SubscriptionKind, SubscriptionRequest } from './subscription-request.js'

/**
 * Where a client subscription's notifications go (a connection's subscriptions). Its `owner` (the
 * key id) and `account` are who holds its logs filters: distinct ones are counted per key and per account.
 */
export interface SubscriptionSink extends LogsFilterHolder {
  /** One notification for the client subscription `id`, with that id already in `text`. */
  notify(id: string, text: string, kind: NodeKind): void
}

export type SubscribeResult =
  | { ok: true; id: string }
  /** The node refused the subscription: its answer text (carrying our own id, to be spliced). */
  | { ok: false; nodeAnswer: string }
  /** No node to subscribe on, or the node failed: the gateway error to answer. */
  | { ok: false; failure: 'no-node' | 'upstream'; cause?: unknown }
  /** No node of the network has a WebSocket in the configuration: no retry can help. */
  | { ok: false; failure: 'no-ws-upstream' }
  /** A new logs filter past a cap (LogsFilterQuota). */
  | ({ ok: false; failure: 'logs-filters' } & LogsFilterRefused)

/** One upstream subscription serving every client that asked for the same thing. */
interface Shared {
  readonly request: SubscriptionRequest
  readonly clients: Map<string, SubscriptionSink>
  /** The node's subscription id on the current node; undefined while (re)subscribing or without a node. */
  upstreamId: string | undefined
  /** The first subscribe in flight: clients asking meanwhile wait for it. */
  opening: Promise<SubscribeResult> | undefined
}

export interface SubscriptionHubOptions extends LogsFilterCaps {
  /** Time-out of an upstream eth_subscribe / eth_unsubscribe. */
  timeoutMs: number
  onWarning?: (message: string, detail?: Record<string, unknown>) => void
}

export interface SubscriptionHubStats {
  network: string
  /** The node the subscriptions are on now (undefined: none is reachable). */
  node: string | undefined
  /** Upstream subscriptions active now, by kind. */
  upstream: Record<SubscriptionKind, number>
  /** eth_subscribe calls sent to nodes since start (re-subscriptions after a reconnect included), by kind. */
  subscribeCalls: Record<SubscriptionKind, number>
  /** Client subscriptions now. */
  clients: number
  /** Notifications received from the node since start. */
  notificationsIn: number
  /** New logs filters refused since start, by the cap that refused them. */
  logsFiltersRefused: Record<LogsFilterLimit, number>
  /** eth_subscribe refused since start because no node of the network has a WebSocket. */
  noWsUpstream: number
}

/** Notifications for a subscription id we do not know yet are held for it (see #onNotification). */
const MAX_ORPHANS = 64
/** Notifications held per such id: the node's answer carrying the id follows at once, a few at most come first. */
const MAX_HELD_PER_ORPHAN = 16

/**
 * The shared subscriptions of one network: state that belongs to one network, kept in one place
 * as an account's is in its actor (docs/architecture.md). However many clients subscribe to newHeads, one upstream subscription serves
 * them; identical logs filters share one too. Each client gets its own subscription id, and
 * the node's notification text is passed on with only that id replaced.
 *
 * The subscriptions live on one node at a time (SubscriptionNodes). When they move to another
 * node they are subscribed again there; clients keep their ids and notice nothing but the
 * notifications missed during the gap.
 *
 * Everything here runs on the event loop without awaiting between reading and writing its maps,
 * except the upstream calls, whose results are checked against `#generation` (the node changed
 * meanwhile: the result is stale) before they are used.
 */
export class SubscriptionHub {
  readonly network: string
  /** The node the subscriptions live on, among the network's. */
  readonly #nodes: SubscriptionNodes
  readonly #opts: SubscriptionHubOptions
  /** By SubscriptionRequest.key. */
  readonly #shared = new Map<string, Shared>()
  /** By the node's subscription id, on the current node. */
  readonly #byUpstreamId = new Map<string, Shared>()
  /** Client subscription id → its shared subscription. */
  readonly #clients = new Map<string, Shared>()
  #orphans = new Map<string, string[]>()
  /** Bumped each time the subscriptions move to another node (or lose theirs). */
  #generation = 0
  #closed = false
  readonly #subscribeCalls: Record<SubscriptionKind, number> = { newHeads: 0, logs: 0, newPendingTransactions: 0 }
  #notificationsIn = 0
  #noWsUpstream = 0
  readonly #logsFilters: LogsFilterQuota

  constructor(network: string, nodes: readonly UpstreamNode[], opts: SubscriptionHubOptions) {
    this.network = network
    this.#opts = opts
    this.#logsFilters = new LogsFilterQuota(opts)
    this.#nodes = new SubscriptionNodes(network, nodes, {
      moved: (node) => this.#moveTo(node),
      notification: (text) => this.#onNotification(text),
      wanted: () => this.#shared.size > 0,
      onWarning: (message, detail) => this.#opts.onWarning?.(message, detail),
    })
  }

  /** Serve from these nodes from now on (a reload changed the network's nodes): see SubscriptionNodes.setNodes. */
  setNodes(nodes: readonly UpstreamNode[]): void {
    this.#nodes.setNodes(nodes)
  }

  /**
   * Subscribe `sink` to what `request` asks for. Joins the shared subscription when there is
   * one; otherwise opens it upstream and waits for the node's answer.
   */
  async subscribe(request: SubscriptionRequest, sink: SubscriptionSink): Promise<SubscribeResult> {
    if (this.#closed) return { ok: false, failure: 'no-node' }
    // Before any share is held: a network without a WebSocket node refuses every subscription alike.
    if (!this.#nodes.configured) {
      this.#noWsUpstream++
      return { ok: false, failure: 'no-ws-upstream' }
    }
    if (request.kind !== 'logs') return this.#subscribe(request, sink)
    // Checked and held before the first await, so that filters asked for at once count together.
    const refused = this.#logsFilters.refusal(request.key, sink, this.#shared.has(request.key))
    if (refused !== undefined) return { ok: false, failure: 'logs-filters', ...refused }
    this.#logsFilters.hold(sink, request.key, 1)
    const result = await this.#subscribe(request, sink)
    if (!result.ok) this.#logsFilters.hold(sink, request.key, -1)
    return result
  }

  async #subscribe(request: SubscriptionRequest, sink: SubscriptionSink): Promise<SubscribeResult> {
    let shared = this.#shared.get(request.key)
    if (shared === undefined) {
      shared = { request, clients: new Map(), upstreamId: undefined, opening: undefined }
      this.#shared.set(request.key, shared)
      if (request.kind === 'logs') this.#logsFilters.upstreamOpened()
      shared.opening = this.#open(shared)
      const result = await shared.opening
      shared.opening = undefined
      if (!result.ok) {
        if (shared.clients.size === 0 && this.#shared.get(request.key) === shared) this.#forget(shared)
        return result
      }
    } else if (shared.opening !== undefined) {
      const result = await shared.opening
      if (!result.ok) return result
    }
    const id = newSubscriptionId()
    shared.clients.set(id, sink)
    this.#clients.set(id, shared)
    return { ok: true, id }
  }

  /** End client subscription `id` of `sink`; false when it has no such subscription. */
  unsubscribe(id: string, sink: SubscriptionSink): boolean {
    const shared = this.#clients.get(id)
    if (shared === undefined || shared.clients.get(id) !== sink) return false
    shared.clients.delete(id)
    this.#clients.delete(id)
    if (shared.request.kind === 'logs') this.#logsFilters.hold(sink, shared.request.key, -1)
    if (shared.clients.size === 0 && shared.opening === undefined) this.#close(shared)
    return true
  }

  stats(): SubscriptionHubStats {
    const upstream: Record<SubscriptionKind, number> = { newHeads: 0, logs: 0, newPendingTransactions: 0 }
    for (const shared of this.#shared.values()) if (shared.upstreamId !== undefined) upstream[shared.request.kind]++
    return {
      network: this.network,
      node: this.#nodes.current?.name,
      upstream,
      subscribeCalls: { ...this.#subscribeCalls },
      clients: this.#clients.size,
      notificationsIn: this.#notificationsIn,
      logsFiltersRefused: this.#logsFilters.refusedCounts(),
      noWsUpstream: this.#noWsUpstream,
    }
  }

  /** Stop: no more subscriptions (the nodes' sockets are closed by their owner). */
  close(): void {
    this.#closed = true
    this.#nodes.close()
    this.#shared.clear()
    this.#logsFilters.clear()
    this.#byUpstreamId.clear()
    this.#clients.clear()
  }

  /** The first upstream subscribe of a shared subscription. */
  async #open(shared: Shared): Promise<SubscribeResult> {
    const node = this.#nodes.ensure()
    if (node === undefined) return { ok: false, failure: 'no-node' }
    const generation = this.#generation
    let text: string
    try {
      text = await this.#call(node, shared)
    } catch (cause) {
      // The node was lost meanwhile, or did not answer: the client may retry.
      return { ok: false, failure: 'upstream', cause }
    }
    const id = subscriptionIdOf(text)
    if (id === undefined) return { ok: false, nodeAnswer: text }
    if (generation === this.#generation && this.#shared.get(shared.request.key) === shared) this.#bind(shared, id)
    // Otherwise the node changed while we waited: the move re-subscribes it (or it was dropped).
    return { ok: true, id }
  }

  async #call(node: UpstreamNode, shared: Shared): Promise<string> {
    this.#subscribeCalls[shared.request.kind]++
    return (node.ws as WsTransport).call('eth_subscribe', shared.request.upstreamParams, this.#opts.timeoutMs)
  }

  #bind(shared: Shared, upstreamId: string): void {
    shared.upstreamId = upstreamId
    this.#byUpstreamId.set(upstreamId, shared)
    const held = this.#orphans.get(upstreamId)
    if (held !== undefined) {
      this.#orphans.delete(upstreamId)
      for (const text of held) this.#deliver(shared, text)
    }
    // Every client left while the subscribe was in flight.
    if (shared.clients.size === 0 && shared.opening === undefined) this.#close(shared)
  }

  /** The last client left: end the upstream subscription. */
  #close(shared: Shared): void {
    this.#forget(shared)
    const id = shared.upstreamId
    const node = this.#nodes.current
    if (id === undefined || node?.ws === undefined || !node.ws.isOpen()) return
    node.ws.call('eth_unsubscribe', [id], this.#opts.timeoutMs).catch(() => {
      // The socket went meanwhile: the subscription went with it.
    })
  }

  #forget(shared: Shared): void {
    if (this.#shared.get(shared.request.key) === shared) {
      this.#shared.delete(shared.request.key)
      if (shared.request.kind === 'logs') this.#logsFilters.upstreamClosed()
    }
    if (shared.upstreamId !== undefined) this.#byUpstreamId.delete(shared.upstreamId)
  }

  /** Move every shared subscription to `node` (undefined: none is reachable; they wait). */
  #moveTo(node: UpstreamNode | undefined): void {
    this.#generation++
    this.#byUpstreamId.clear()
    this.#orphans = new Map()
    for (const shared of this.#shared.values()) shared.upstreamId = undefined
    if (node === undefined) return
    const generation = this.#generation
    for (const shared of this.#shared.values()) {
      // Nobody waits for it (its first subscribe is in this very call: it binds itself).
      if (shared.clients.size === 0 && shared.opening === undefined) continue
      this.#call(node, shared).then(
        (text) => {
          if (generation !== this.#generation || this.#shared.get(shared.request.key) !== shared) return
          const id = subscriptionIdOf(text)
          if (id === undefined) {
            this.#opts.onWarning?.('the node refused a re-subscription', { network: this.network, node: node.name, answer: text.slice(0, 200) })
            return
          }
          this.#bind(shared, id)
        },
        (err: unknown) => {
          // The socket dropped again: its state change moves the subscriptions once more.
          this.#opts.onWarning?.('re-subscription failed', { network: this.network, node: node.name, err: String(err) })
        },
      )
    }
  }

  /** A notification from the node the subscriptions live on. */
  #onNotification(text: string): void {
    this.#notificationsIn++
    const span = subscriptionIdSpan(text)
    if (span === undefined) return
    const upstreamId = text.slice(span.start, span.end)
    const shared = this.#byUpstreamId.get(upstreamId)
    if (shared === undefined) {
      // The node may send the first notification in the same read as its answer to the
      // subscribe, before that answer's continuation has bound the id: hold it for a moment.
      // Ids that never get bound (a subscription ended upstream while its notifications were on
      // the wire) must not fill the holding area for good: past the bound, start afresh.
      if (this.#orphans.size >= MAX_ORPHANS && !this.#orphans.has(upstreamId)) this.#orphans = new Map()
      const held = this.#orphans.get(upstreamId) ?? []
      if (held.length < MAX_HELD_PER_ORPHAN) held.push(text)
      this.#orphans.set(upstreamId, held)
      return
    }
    this.#deliver(shared, text)
  }

  #deliver(shared: Shared, text: string): void {
    const span = subscriptionIdSpan(text)!
    const before = text.slice(0, span.start)
    const after = text.slice(span.end)
    const kind = this.#nodes.current?.kind ?? 'full'
    for (const [id, sink] of shared.clients) sink.notify(id, before + id + after, kind)
  }
}
