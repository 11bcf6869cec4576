import { Counter, Gauge, type Registry } from 'prom-client'

type Labels<L extends string> = Partial<Record<L, string>>

/** Hands the current value of each label set to a metric being scraped. */
export type Emit<L extends string> = (labels: Labels<L>, value: number) => void

export interface ScrapedMetric<L extends string> {
  name: string
  help: string
  labelNames?: readonly L[]
  /**
   * Called at each scrape: emit the value of every label set that exists now. Values emitted
   * twice for one label set add up (a network's shared and dedicated subscription hubs); a label
   * set not emitted is gone from the scrape (a node or a hub that no longer exists).
   */
  read: (emit: Emit<L>) => void
}

/**
 * A metric read when scraped. A counter's running total is kept by the part that counts (a
 * node's calls, the cache's hits), so nothing is added to the request path and the total is the
 * part's; a gauge is set from live state (queue depth, lag, health).
 * @example
 * scraped(registry, 'counter', { name: 'tollgate_cache_hits_total', help: '…', read: (emit) => emit({}, cache.stats().hits) })
 */
export function scraped<L extends string>(registry: Registry, type: 'counter' | 'gauge', spec: ScrapedMetric<L>): void {
  const config = {
    name: spec.name,
    help: spec.help,
    labelNames: spec.labelNames ?? [],
    registers: [registry],
    collect(this: Counter<L> | Gauge<L>) {
      this.reset()
      spec.read((labels, value) => {
        // A counter refuses a negative increment; neither takes NaN (a node with no latency yet).
        if (Number.isFinite(value) && (type === 'gauge' || value >= 0)) this.inc(labels, value)
      })
    },
  }
  if (type === 'counter') new Counter<L>(config)
  else new Gauge<L>(config)
}

/** A counter or a gauge without labels, read when scraped. */
export function scrapedValue(registry: Registry, type: 'counter' | 'gauge', name: string, help: string, value: () => number): void {
  scraped(registry, type, { name, help, read: (emit) => emit({}, value()) })
}
