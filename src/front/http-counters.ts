import type { Metrics, Counter } from '../metrics/metrics.js'

/** HTTP answers by network and status, for /metrics. */
export class HttpCounters {
  readonly #answers: Counter
  constructor(metrics: Metrics) {
    this.#answers = metrics.counter('tollgate_http_responses_total', 'HTTP JSON-RPC answers by network and HTTP status')
  }
  answered(network: string, status: number): void {
    this.#answers.inc({ network, status: String(status) })
  }
}
