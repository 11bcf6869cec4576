import type { Counter, Gauge, Metrics } from '../metrics/metrics.js'
import type { SubscriptionHubStats } from './subscription-hub.js'

/** Why the gateway closed a WebSocket connection (a label of tollgate_ws_closed_total). */
export type WsCloseCause = 'client' | 'slow-consumer' | 'message-too-big' | 'key-invalid' | 'shutdown' | 'idle-or-error'

/** The WebSocket endpoint's figures for /metrics. */
export class WsCounters {
  readonly #accepted: Counter
  readonly #refused: Counter
  readonly #closed: Counter
  readonly #messages: Counter
  readonly #open: Gauge
  readonly #upstream: Gauge
  readonly #subscribeCalls: Gauge
  readonly #clientSubs: Gauge
  readonly #subscriptionNode: Gauge
  readonly #notificationsIn: Gauge
  readonly #lastNode = new Map<string, string>()
  readonly #openByNetwork = new Map<string, number>()

  constructor(metrics: Metrics, hubs: () => SubscriptionHubStats[]) {
    this.#accepted = metrics.counter('tollgate_ws_connections_total', 'WebSocket connections accepted, by network')
    this.#refused = metrics.counter('tollgate_ws_refused_total', 'WebSocket upgrades refused, by network and reason')
    this.#closed = metrics.counter('tollgate_ws_closed_total', 'WebSocket connections closed, by cause')
    this.#messages = metrics.counter('tollgate_ws_messages_total', 'WebSocket messages received, by network and outcome')
    this.#open = metrics.gauge('tollgate_ws_connections', 'WebSocket connections open now, by network')
    this.#upstream = metrics.gauge('tollgate_ws_upstream_subscriptions', 'Upstream subscriptions open now (each shared by every client asking the same), by network and kind')
    this.#subscribeCalls = metrics.gauge('tollgate_ws_upstream_subscribe_calls', 'eth_subscribe calls sent to nodes since start (re-subscriptions included), by network and kind')
    this.#clientSubs = metrics.gauge('tollgate_ws_subscriptions', 'Client subscriptions open now, by network')
    this.#notificationsIn = metrics.gauge('tollgate_ws_upstream_notifications', 'Notifications received from nodes since start (each fanned out to every client of its subscription), by network')
    this.#subscriptionNode = metrics.gauge('tollgate_ws_subscription_node', '1 for the node that holds the upstream subscriptions of a network now')
    metrics.onCollect(() => {
      for (const [network, n] of this.#openByNetwork) this.#open.set(n, { network })
      for (const s of hubs()) {
        for (const [kind, n] of Object.entries(s.upstream)) this.#upstream.set(n, { network: s.network, kind })
        for (const [kind, n] of Object.entries(s.subscribeCalls)) this.#subscribeCalls.set(n, { network: s.network, kind })
        this.#clientSubs.set(s.clients, { network: s.network })
        this.#notificationsIn.set(s.notificationsIn, { network: s.network })
        const last = this.#lastNode.get(s.network)
        if (last !== undefined && last !== s.node) this.#subscriptionNode.set(0, { network: s.network, node: last })
        if (s.node !== undefined) {
          this.#subscriptionNode.set(1, { network: s.network, node: s.node })
          this.#lastNode.set(s.network, s.node)
        } else this.#lastNode.delete(s.network)
      }
    })
  }

  opened(network: string): void {
    this.#accepted.inc({ network })
    this.#openByNetwork.set(network, (this.#openByNetwork.get(network) ?? 0) + 1)
  }

  closed(network: string, cause: WsCloseCause): void {
    this.#closed.inc({ cause })
    this.#openByNetwork.set(network, (this.#openByNetwork.get(network) ?? 1) - 1)
  }

  refused(network: string, reason: string): void {
    this.#refused.inc({ network, reason })
  }

  message(network: string, outcome: 'served' | 'throttled' | 'dropped' | 'penalized'): void {
    this.#messages.inc({ network, outcome })
  }

}
