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
  readonly #notifications: Counter
  readonly #open: Gauge
  readonly #upstream: Gauge
  readonly #subscribeCalls: Gauge
  readonly #clientSubs: Gauge
  readonly #openByNetwork = new Map<string, number>()

  constructor(metrics: Metrics, hubs: () => SubscriptionHubStats[]) {
    this.#accepted = metrics.counter('tollgate_ws_connections_total', 'WebSocket connections accepted, by network')
    this.#refused = metrics.counter('tollgate_ws_refused_total', 'WebSocket upgrades refused, by network and reason')
    this.#closed = metrics.counter('tollgate_ws_closed_total', 'WebSocket connections closed, by cause')
    this.#messages = metrics.counter('tollgate_ws_messages_total', 'WebSocket messages received, by network and outcome')
    this.#notifications = metrics.counter('tollgate_ws_notifications_total', 'Subscription notifications sent to clients, by network')
    this.#open = metrics.gauge('tollgate_ws_connections', 'WebSocket connections open now, by network')
    this.#upstream = metrics.gauge('tollgate_ws_upstream_subscriptions', 'Upstream subscriptions open now (each shared by every client asking the same), by network and kind')
    this.#subscribeCalls = metrics.gauge('tollgate_ws_upstream_subscribe_calls', 'eth_subscribe calls sent to nodes since start (re-subscriptions included), by network and kind')
    this.#clientSubs = metrics.gauge('tollgate_ws_subscriptions', 'Client subscriptions open now, by network')
    metrics.onCollect(() => {
      for (const [network, n] of this.#openByNetwork) this.#open.set(n, { network })
      for (const s of hubs()) {
        for (const [kind, n] of Object.entries(s.upstream)) this.#upstream.set(n, { network: s.network, kind })
        for (const [kind, n] of Object.entries(s.subscribeCalls)) this.#subscribeCalls.set(n, { network: s.network, kind })
        this.#clientSubs.set(s.clients, { network: s.network })
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

  notified(network: string): void {
    this.#notifications.inc({ network })
  }
}
