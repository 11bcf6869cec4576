import { Counter, type Registry } from 'prom-client'
import type { NetworkLabels } from '../metrics/labels.js'

type Child = Counter.Internal

/**
 * HTTP answers by network and status, for /metrics. On the request path of every call, so it
 * allocates nothing there: the labelled child of each (network, status) is made once and kept
 * (prom-client's `labels(...)` builds objects on every call). Networks that are not configured
 * count as `other`: a slug in /http/<slug> is the client's to choose, and each distinct label value
 * would be a series kept for the life of the process. Statuses are the gateway's own (a fixed set).
 */
export class HttpCounters {
  readonly #answers: Counter<'network' | 'status'>
  readonly #networks: NetworkLabels
  /** network label → status → child; the label's own map is shared by every slug it covers. */
  readonly #children = new Map<string, Map<number, Child>>()

  constructor(registry: Registry, networks: NetworkLabels) {
    this.#answers = new Counter({
      name: 'tollgate_http_responses_total',
      help: 'HTTP JSON-RPC answers by network (a network not configured: other) and HTTP status',
      labelNames: ['network', 'status'],
      registers: [registry],
    })
    this.#networks = networks
    for (const label of networks.values) this.#children.set(label, new Map())
  }

  answered(network: string, status: number): void {
    const byStatus = this.#children.get(network) ?? this.#children.get(this.#networks.of(network))!
    let child = byStatus.get(status)
    if (child === undefined) {
      child = this.#answers.labels({ network: this.#networks.of(network), status: String(status) })
      byStatus.set(status, child)
    }
    child.inc()
  }
}
