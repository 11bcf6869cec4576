import type { Registry } from 'prom-client'
import { scraped } from '../metrics/scraped.js'
import type { NetworkLabels } from '../metrics/labels.js'

/**
 * HTTP answers by network and status, for /metrics. On the request path of every call, so it
 * counts in plain numbers, read when scraped: a prom-client child's inc() hashes its labels on
 * every call (120 ns). Networks that are not configured count as `other`: a slug in
 * /http/<slug> is the client's to choose, and each distinct label value would be a series kept
 * for the life of the process. Statuses are the gateway's own (a fixed set).
 */
export class HttpCounters {
  readonly #networks: NetworkLabels
  /** network label → status → its count; the label's own map is shared by every slug it covers. */
  readonly #counts = new Map<string, Map<number, { n: number }>>()
  /** The series in the order they were first counted (the order of the scrape). */
  readonly #series: Array<{ network: string; status: string; count: { n: number } }> = []

  constructor(registry: Registry, networks: NetworkLabels) {
    this.#networks = networks
    for (const label of networks.values) this.#counts.set(label, new Map())
    networks.onAdded((label) => this.#counts.set(label, new Map()))
    scraped(registry, 'counter', {
      name: 'tollgate_http_responses_total',
      help: 'HTTP JSON-RPC answers by network (a network not configured: other) and HTTP status',
      labelNames: ['network', 'status'],
      read: (emit) => {
        for (const s of this.#series) emit({ network: s.network, status: s.status }, s.count.n)
      },
    })
  }

  answered(network: string, status: number): void {
    const byStatus = this.#counts.get(network) ?? this.#counts.get(this.#networks.of(network))!
    const count = byStatus.get(status)
    if (count !== undefined) {
      count.n++
      return
    }
    const first = { n: 1 }
    byStatus.set(status, first)
    this.#series.push({ network: this.#networks.of(network), status: String(status), count: first })
  }
}
