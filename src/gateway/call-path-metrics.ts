import type { Metrics } from '../metrics/metrics.js'
import type { Upstreams } from '../upstream/upstreams.js'
import type { ImmutableCache } from '../cache/immutable-cache.js'
import type { FinalityTracker } from '../cache/finality.js'
import type { UpstreamCaller } from './upstream-caller.js'

/**
 * The /metrics families of the call path beyond the HTTP front: the cache, in-flight sharing,
 * eth_getLogs splitting, transactions answered by hash, hedging, and each node's lag, error rate
 * and latency. All are read from live counters when scraped: nothing here is on the request path.
 */
export function registerCallPathMetrics(
  metrics: Metrics,
  parts: { upstreams: Upstreams; calls: UpstreamCaller; cache?: ImmutableCache; finality?: FinalityTracker },
): void {
  const { upstreams, calls, cache, finality } = parts
  const g = (name: string, help: string) => metrics.gauge(name, help)
  const cacheHits = g('tollgate_cache_hits', 'Calls answered from the immutable-answer cache (this process)')
  const cacheMisses = g('tollgate_cache_misses', 'Cacheable calls not in the cache (this process)')
  const cacheStores = g('tollgate_cache_stores', 'Final answers written to the cache (this process)')
  const cacheEvictions = g('tollgate_cache_evictions', 'Entries evicted to stay under cache.maxBytes (this process)')
  const cacheBytes = g('tollgate_cache_bytes', 'Bytes of answers in the cache (every process on the host)')
  const cacheEntries = g('tollgate_cache_entries', 'Answers in the cache (every process on the host)')
  const cacheGeneration = g('tollgate_cache_generation', 'Times the cache of a network was dropped after a reorg below the finalized block')
  const finalized = g('tollgate_finalized_block', 'Finalized block of each network, as the cache uses it')
  const shared = g('tollgate_inflight_shared', 'Calls answered by an identical call already in flight upstream')
  const logsSplit = g('tollgate_getlogs_split', 'eth_getLogs calls split into chunks')
  const logsChunks = g('tollgate_getlogs_chunks', 'eth_getLogs chunks sent')
  const logsRefused = g('tollgate_getlogs_refused', 'eth_getLogs calls refused (range too wide, too many logs)')
  const txKnown = g('tollgate_tx_already_known', 'eth_sendRawTransaction answered with the hash where a node said already known')
  const txRecovered = g('tollgate_tx_recovered', 'eth_sendRawTransaction answered with the hash after the first node failed')
  const hedges = g('tollgate_hedged_calls', 'Reads also sent to a second node after the first was slower than its p95')
  const hedgeWins = g('tollgate_hedge_wins', 'Hedged reads the second node answered first')
  const lag = g('tollgate_upstream_lag_blocks', 'Blocks each node is behind the best node of its network')
  const errorRate = g('tollgate_upstream_error_rate', 'Share of failed calls among the last calls of each node')
  const p95 = g('tollgate_upstream_latency_p95_ms', 'p95 latency of the recent successful calls of each node, ms')
  const out = g('tollgate_upstream_out', '1 while a node is out, by reason (failures, error-rate, behind)')

  metrics.onCollect(() => {
    if (cache) {
      const s = cache.stats()
      cacheHits.set(s.hits)
      cacheMisses.set(s.misses)
      cacheStores.set(s.stores)
      cacheEvictions.set(s.evictions)
      cacheBytes.set(s.bytes)
      cacheEntries.set(s.entries)
    }
    shared.set(calls.inflight.shared)
    logsSplit.set(calls.logs.counters.split)
    logsChunks.set(calls.logs.counters.chunks)
    logsRefused.set(calls.logs.counters.refused)
    txKnown.set(calls.transactions.counters.alreadyKnown)
    txRecovered.set(calls.transactions.counters.recovered)
    for (const network of upstreams.networks()) {
      const pool = upstreams.pool(network)!
      hedges.set(pool.hedges.started, { network })
      hedgeWins.set(pool.hedges.won, { network })
      if (cache) cacheGeneration.set(cache.generation(network), { network })
      const f = finality?.finalized(network)
      if (f !== undefined) finalized.set(f, { network })
    }
    for (const s of upstreams.stats()) {
      const labels = { network: s.network, node: s.node, kind: s.kind }
      if (s.lag !== undefined) lag.set(s.lag, labels)
      errorRate.set(s.errorRate, labels)
      if (Number.isFinite(s.latencyP95Ms)) p95.set(Math.round(s.latencyP95Ms * 10) / 10, labels)
      for (const reason of ['failures', 'error-rate', 'behind']) out.set(s.outReason === reason ? 1 : 0, { ...labels, reason })
    }
  })
}
