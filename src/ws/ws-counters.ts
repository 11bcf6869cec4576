import { Counter, Gauge, type Registry } from 'prom-client'
import type { NetworkLabels } from '../metrics/labels.js'
import { scraped, type Emit } from '../metrics/scraped.js'
import type { SubscriptionHubStats } from './subscription-hub.js'

/** Why the gateway closed a WebSocket connection (a label of tollgate_ws_closed_total). */
export type WsCloseCause =
  | 'client'
  | 'slow-consumer'
  | 'notification-budget'
  | 'message-too-big'
  | 'key-invalid'
  | 'shutdown'
  | 'idle-or-error'
  | 'invalid-utf8'

export type WsMessageOutcome = 'served' | 'throttled' | 'dropped' | 'penalized'

const OUTCOMES: readonly WsMessageOutcome[] = ['served', 'throttled', 'dropped', 'penalized']

/**
 * The WebSocket endpoint's figures for /metrics. Every network label goes through `networks`: a
 * refused upgrade names whatever slug the client sent, and only configured ones become label
 * values. Counted per message, so the children of (network, outcome) are made once.
 */
export class WsCounters {
  readonly #networks: NetworkLabels
  readonly #accepted: Counter<'network'>
  readonly #refused: Counter<'network' | 'reason'>
  readonly #closed: Counter<'cause'>
  readonly #open: Gauge<'network'>
  readonly #messages = new Map<string, Record<WsMessageOutcome, number>>()

  constructor(registry: Registry, networks: NetworkLabels, hubs: () => SubscriptionHubStats[]) {
    this.#networks = networks
    this.#accepted = new Counter({
      name: 'tollgate_ws_connections_total',
      help: 'WebSocket connections accepted, by network',
      labelNames: ['network'],
      registers: [registry],
    })
    this.#refused = new Counter({
      name: 'tollgate_ws_refused_total',
      help: 'WebSocket upgrades refused, by network (a network not configured: other) and reason (the error code)',
      labelNames: ['network', 'reason'],
      registers: [registry],
    })
    this.#closed = new Counter({
      name: 'tollgate_ws_closed_total',
      help: 'WebSocket connections closed, by cause',
      labelNames: ['cause'],
      registers: [registry],
    })
    this.#open = new Gauge({
      name: 'tollgate_ws_connections',
      help: 'WebSocket connections open now, by network',
      labelNames: ['network'],
      registers: [registry],
    })
    // Counted per message as plain numbers, read when scraped: a prom-client child's inc() hashes
    // its labels on every call (120 ns, on the path of every WebSocket message).
    for (const network of networks.values) this.#messages.set(network, { served: 0, throttled: 0, dropped: 0, penalized: 0 })
    networks.onAdded((network) => this.#messages.set(network, { served: 0, throttled: 0, dropped: 0, penalized: 0 }))
    scraped(registry, 'counter', {
      name: 'tollgate_ws_messages_total',
      help: 'WebSocket messages received, by network and outcome',
      labelNames: ['network', 'outcome'],
      read: (emit) => {
        for (const [network, counts] of this.#messages) for (const outcome of OUTCOMES) emit({ network, outcome }, counts[outcome])
      },
    })

    // Hubs of one network (its shared pool's and the dedicated pools' of Private Node accounts) add up.
    const fromHubs = <L extends string>(
      type: 'counter' | 'gauge',
      name: string,
      help: string,
      labelNames: L[],
      each: (s: SubscriptionHubStats, emit: Emit<L>) => void,
    ): void =>
      scraped(registry, type, {
        name,
        help,
        labelNames,
        read: (emit) => {
          for (const s of hubs()) each(s, emit)
        },
      })
    const byKind = (counts: Record<string, number>, network: string, emit: Emit<'network' | 'kind'>): void => {
      for (const [kind, n] of Object.entries(counts)) emit({ network, kind }, n)
    }
    fromHubs(
      'gauge',
      'tollgate_ws_upstream_subscriptions',
      'Upstream subscriptions open now (each shared by every client asking the same), by network and kind',
      ['network', 'kind'],
      (s, emit) => byKind(s.upstream, s.network, emit),
    )
    fromHubs(
      'counter',
      'tollgate_ws_upstream_subscribe_calls_total',
      'eth_subscribe calls sent to nodes since start (re-subscriptions included), by network and kind',
      ['network', 'kind'],
      (s, emit) => byKind(s.subscribeCalls, s.network, emit),
    )
    fromHubs('gauge', 'tollgate_ws_subscriptions', 'Client subscriptions open now, by network', ['network'], (s, emit) =>
      emit({ network: s.network }, s.clients),
    )
    fromHubs(
      'counter',
      'tollgate_ws_upstream_notifications_total',
      'Notifications received from nodes since start (each fanned out to every client of its subscription), by network',
      ['network'],
      (s, emit) => emit({ network: s.network }, s.notificationsIn),
    )
    fromHubs(
      'counter',
      'tollgate_ws_logs_filters_refused_total',
      'New logs filters refused, by network and the cap that refused them (key: ws.maxLogsFiltersPerKey, account: ws.maxLogsFiltersPerAccount, ' +
        "network: ws.maxLogsFiltersPerNetwork, share: the account held more than the network's free ones)",
      ['network', 'limit'],
      (s, emit) => {
        for (const [limit, n] of Object.entries(s.logsFiltersRefused)) emit({ network: s.network, limit }, n)
      },
    )
    fromHubs(
      'counter',
      'tollgate_ws_subscribe_refused_total',
      "eth_subscribe calls refused by the network's configuration, by network and reason (no-ws-upstream: none of its nodes has a ws URL)",
      ['network', 'reason'],
      (s, emit) => emit({ network: s.network, reason: 'no-ws-upstream' }, s.noWsUpstream),
    )
    scraped(registry, 'gauge', {
      name: 'tollgate_ws_subscription_node',
      help: 'Present with value 1 for each node that holds upstream subscriptions of a network now',
      labelNames: ['network', 'node'],
      read: (emit) => {
        const holding = new Map<string, { network: string; node: string }>()
        for (const s of hubs()) if (s.node !== undefined) holding.set(`${s.network} ${s.node}`, { network: s.network, node: s.node })
        for (const labels of holding.values()) emit(labels, 1)
      },
    })
  }

  opened(network: string): void {
    const label = this.#networks.of(network)
    this.#accepted.inc({ network: label })
    this.#open.inc({ network: label })
  }

  closed(network: string, cause: WsCloseCause): void {
    this.#closed.inc({ cause })
    this.#open.dec({ network: this.#networks.of(network) })
  }

  refused(network: string, reason: string): void {
    this.#refused.inc({ network: this.#networks.of(network), reason })
  }

  message(network: string, outcome: WsMessageOutcome): void {
    ;(this.#messages.get(network) ?? this.#messages.get(this.#networks.of(network))!)[outcome]++
  }
}
