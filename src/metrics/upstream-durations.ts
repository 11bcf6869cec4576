import { Histogram, type Registry } from 'prom-client'
import { methodLabel } from './labels.js'

/** Records the duration of one successful call to a node, in ms. */
export type DurationRecorder = (method: string, ms: number) => void

/**
 * Buckets in seconds, from a cached-in-memory node answer (1 ms) to a heavy trace near the
 * default heavy time-out (60 s).
 */
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]

/**
 * `tollgate_upstream_request_duration_seconds`: how long each configured node took to answer a
 * call, by network, node, kind and method (erpc's upstream request duration, with the same
 * labels as our other node figures). Methods outside the method table count as `other`, so the
 * series are bounded by the config and the table. Recorded where the node already measures its
 * latency for hedging; each node keeps the labelled child of each method (prom-client's
 * `labels(...)` allocates).
 * @example
 * const durations = new UpstreamDurations(registry)
 * const record = durations.forNode('eth-1', 'a', 'full')
 * record('eth_call', 12.5)
 */
export class UpstreamDurations {
  readonly #histogram: Histogram<'network' | 'node' | 'kind' | 'method'>

  constructor(registry: Registry) {
    this.#histogram = new Histogram({
      name: 'tollgate_upstream_request_duration_seconds',
      help: 'Time a node took to answer a call (successful calls, batches excluded), by network, node, kind and method (not in the method table: other)',
      labelNames: ['network', 'node', 'kind', 'method'],
      buckets: BUCKETS,
      registers: [registry],
    })
  }

  forNode(network: string, node: string, kind: string): DurationRecorder {
    const children = new Map<string, Histogram.Internal<'network' | 'node' | 'kind' | 'method'>>()
    const childOf = (method: string): Histogram.Internal<'network' | 'node' | 'kind' | 'method'> => {
      const label = methodLabel(method)
      let child = children.get(label)
      if (child === undefined) {
        child = this.#histogram.labels({ network, node, kind, method: label })
        children.set(label, child)
      }
      return child
    }
    return (method, ms) => (children.get(method) ?? childOf(method)).observe(ms / 1000)
  }
}
