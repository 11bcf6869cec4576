import type { Metric, Registry } from 'prom-client'
import { methodLabel } from './labels.js'

/** Records the duration of one successful call to a node, in ms. */
export type DurationRecorder = (method: string, ms: number) => void

/**
 * Buckets in seconds, from a cached-in-memory node answer (1 ms) to a heavy trace near the
 * default heavy time-out (60 s).
 */
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]

/** One label set's counts: a count per bucket (not cumulative), the sum and the count. */
interface Series {
  readonly labels: Readonly<Record<'network' | 'node' | 'kind' | 'method', string>>
  readonly buckets: number[]
  sum: number
  count: number
}

const NAME = 'tollgate_upstream_request_duration_seconds'
const HELP = 'Time a node took to answer a call (successful calls, batches excluded), by network, node, kind and method (not in the method table: other)'

/**
 * `tollgate_upstream_request_duration_seconds`: how long each configured node took to answer a
 * call, by network, node, kind and method (erpc's upstream request duration, with the same
 * labels as our other node figures). Methods outside the method table count as `other`, so the
 * series are bounded by the config and the table. Recorded where the node already measures its
 * latency for hedging.
 *
 * Kept in plain arrays and handed to the registry as a histogram when scraped: prom-client's
 * Histogram hashes the labels of every observation (350 ns, on the path of every upstream call).
 * @example
 * const durations = new UpstreamDurations(registry)
 * const record = durations.forNode('eth-1', 'a', 'full')
 * record('eth_call', 12.5)
 */
export class UpstreamDurations {
  readonly #series: Series[] = []

  constructor(registry: Registry) {
    const series = this.#series
    registry.registerMetric({
      name: NAME,
      help: HELP,
      type: 'histogram',
      get: async () => ({ name: NAME, help: HELP, type: 'histogram', aggregator: 'sum', values: exported(series) }),
      reset: () => {
        for (const s of series) {
          s.buckets.fill(0)
          s.sum = 0
          s.count = 0
        }
      },
    } as unknown as Metric)
  }

  forNode(network: string, node: string, kind: string): DurationRecorder {
    const children = new Map<string, Series>()
    const seriesOf = (method: string): Series => {
      const label = methodLabel(method)
      let s = children.get(label)
      if (s === undefined) {
        s = { labels: { network, node, kind, method: label }, buckets: new Array<number>(BUCKETS.length).fill(0), sum: 0, count: 0 }
        children.set(label, s)
        this.#series.push(s)
      }
      return s
    }
    return (method, ms) => {
      const s = children.get(method) ?? seriesOf(method)
      const seconds = ms / 1000
      let b = 0
      while (b < BUCKETS.length && seconds > BUCKETS[b]) b++
      if (b < BUCKETS.length) s.buckets[b]++
      s.sum += seconds
      s.count++
    }
  }
}

/** The series as prom-client's histograms give them to the registry: cumulative buckets, +Inf, sum and count. */
function exported(series: readonly Series[]): Array<{ labels: Record<string, string | number>; value: number; metricName: string }> {
  const values: Array<{ labels: Record<string, string | number>; value: number; metricName: string }> = []
  for (const s of series) {
    let acc = 0
    for (let b = 0; b < BUCKETS.length; b++) {
      acc += s.buckets[b]
      values.push({ labels: { le: BUCKETS[b], ...s.labels }, value: acc, metricName: `${NAME}_bucket` })
    }
    values.push({ labels: { le: '+Inf', ...s.labels }, value: s.count, metricName: `${NAME}_bucket` })
    values.push({ labels: { ...s.labels }, value: s.sum, metricName: `${NAME}_sum` })
    values.push({ labels: { ...s.labels }, value: s.count, metricName: `${NAME}_count` })
  }
  return values
}
