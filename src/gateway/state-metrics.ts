import type { Registry } from 'prom-client'
import { scrapedValue } from '../metrics/scraped.js'

/**
 * The /metrics gauges of the gateway's state beside the call path: events waiting for the event
 * log, how far the projections are, and the key actors in memory. Read when scraped.
 */
export function registerStateMetrics(
  registry: Registry,
  parts: { outbox: { pending(): number }; store: { checkpoint(): number }; keys: { readonly size: number } },
): void {
  const gauge = (name: string, help: string, value: () => number): void => scrapedValue(registry, 'gauge', name, help, value)
  gauge('tollgate_outbox_pending_events', 'Events waiting in the durable outbox for the event log', () => parts.outbox.pending())
  gauge('tollgate_projection_checkpoint', 'Last event log position applied to the LMDB projections', () => parts.store.checkpoint())
  gauge('tollgate_active_keys', 'Key actors in memory', () => parts.keys.size)
}
