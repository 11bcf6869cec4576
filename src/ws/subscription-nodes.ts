import type { UpstreamNode } from '../upstream/node.js'
import type { WsTransport } from '../upstream/ws-transport.js'

/** What a hub hears from its nodes. */
export interface SubscriptionNodesEvents {
  /** The subscriptions move to `node`, to be subscribed again there (undefined: none is reachable; they wait). */
  moved(node: UpstreamNode | undefined): void
  /** A message from the node the subscriptions live on that is not an answer (a notification). */
  notification(text: string): void
  /** Whether the hub has subscriptions to keep: only then does a node opening, or a reload, move them. */
  wanted(): boolean
  onWarning?: (message: string, detail?: Record<string, unknown>) => void
}

/**
 * The nodes a hub may subscribe on, and the one its subscriptions live on now: one node at a time
 * (a full node when there is one), over that node's multiplexed WebSocket. When its socket drops,
 * the subscriptions move to another node whose socket is open, or wait for one to open.
 * @example
 * const nodes = new SubscriptionNodes('eth-1', pool.nodes(), { moved, notification, wanted })
 * nodes.ensure() // the node to subscribe on, choosing one (and moving) when there is none
 */
export class SubscriptionNodes {
  readonly #network: string
  readonly #events: SubscriptionNodesEvents
  #nodes: readonly UpstreamNode[]
  /** Nodes whose socket is listened to (a node kept across a reload is listened to once). */
  readonly #listened = new WeakSet<UpstreamNode>()
  #current: UpstreamNode | undefined
  #closed = false

  constructor(network: string, nodes: readonly UpstreamNode[], events: SubscriptionNodesEvents) {
    this.#network = network
    this.#events = events
    this.#nodes = this.#take(nodes)
  }

  /** Whether any node of the network has a WebSocket at all: without one, subscriptions can never be served. */
  get configured(): boolean {
    return this.#nodes.length > 0
  }

  /** The node the subscriptions live on now (undefined: none is reachable). */
  get current(): UpstreamNode | undefined {
    return this.#current
  }

  /**
   * Serve from these nodes from now on (a reload changed the network's nodes). When the node the
   * subscriptions live on was dropped, they move to one of these whose socket is open, as when a
   * socket drops (clients keep their ids); while none is open yet (a new node still connecting),
   * they stay on the dropped node, which is closed only later (see Upstreams.retire), and move
   * when a new one opens or the old one closes.
   */
  setNodes(nodes: readonly UpstreamNode[]): void {
    this.#nodes = this.#take(nodes)
    if (this.#closed || !this.#events.wanted()) return
    if (this.#current === undefined || !this.#nodes.includes(this.#current)) this.ensure()
  }

  /** The node subscriptions live on, choosing one (and moving to it) when there is none. */
  ensure(): UpstreamNode | undefined {
    // A node on another chain never serves, not even as the last one open: its heads are not ours.
    const serves = (n: UpstreamNode): boolean => n.ws!.isOpen() && n.outReason() !== 'wrong-chain'
    const current = this.#current
    if (current !== undefined && serves(current) && this.#nodes.includes(current)) return current
    const next = this.#nodes.find((n) => serves(n) && n.healthy()) ?? this.#nodes.find(serves)
    // A node a reload dropped serves on while none of the new ones is open yet (see setNodes).
    if (next === undefined && current !== undefined && serves(current)) return current
    if (next !== current) this.#moveTo(next)
    return next
  }

  /** The hub stopped: its nodes' sockets no longer move anything. */
  close(): void {
    this.#closed = true
  }

  /** The nodes with a WebSocket, full nodes first (they follow the head; archive nodes stand in), each listened to. */
  #take(nodes: readonly UpstreamNode[]): readonly UpstreamNode[] {
    const taken = [...nodes.filter((n) => n.ws && n.kind === 'full'), ...nodes.filter((n) => n.ws && n.kind === 'archive')]
    for (const node of taken) {
      if (this.#listened.has(node)) continue
      this.#listened.add(node)
      const ws = node.ws as WsTransport
      // Chained, not replaced: another part of the gateway may listen to the same socket.
      const onNotification = ws.onNotification
      const onStateChange = ws.onStateChange
      ws.onNotification = (text) => {
        onNotification(text)
        if (node === this.#current) this.#events.notification(text)
      }
      ws.onStateChange = (open) => {
        onStateChange(open)
        this.#onStateChange(node, open)
      }
    }
    return taken
  }

  #onStateChange(node: UpstreamNode, open: boolean): void {
    if (this.#closed) return
    if (!open && node === this.#current) {
      this.#events.onWarning?.('subscription node lost; moving the subscriptions', { network: this.#network, node: node.name })
      this.#current = undefined
      this.ensure() ?? this.#moveTo(undefined)
      return
    }
    // A node opened while the subscriptions have none, or sit on a node a reload dropped.
    if (open && this.#events.wanted() && (this.#current === undefined || !this.#nodes.includes(this.#current))) this.ensure()
  }

  #moveTo(node: UpstreamNode | undefined): void {
    this.#current = node
    this.#events.moved(node)
  }
}
