import type { Registry } from 'prom-client'
import { scraped, scrapedValue } from '../metrics/scraped.js'

/**
 * The /metrics gauges of the gateway's state beside the call path: whether the event log is
 * reachable, events waiting for it, how far the projections are, and the key actors in memory;
 * and the compute units served, and the calls refused by keys' own rules.
 * Read when scraped.
 */
export function registerStateMetrics(
  registry: Registry,
  parts: {
    log: { readonly connected: boolean }
    outbox: { pending(): number }
    store: { checkpoint(): number }
    keys: { readonly size: number }
    usage?: { readonly unitsServed: number; readonly keyRuleRefusals: Readonly<Record<string, number>> }
  },
): void {
  const gauge = (name: string, help: string, value: () => number): void => scrapedValue(registry, 'gauge', name, help, value)
  // The one sign of a NATS outage that does not wait for the outbox to fill: calls are still
  // served meanwhile, so nothing else on /metrics changes at once.
  gauge('tollgate_event_log_connected', '1 while the event log takes appends (NATS connected; the embedded log: always), 0 while not', () =>
    parts.log.connected ? 1 : 0,
  )
  gauge('tollgate_outbox_pending_events', 'Events waiting in the durable outbox for the event log', () => parts.outbox.pending())
  gauge('tollgate_projection_checkpoint', 'Last event log position applied to the LMDB projections', () => parts.store.checkpoint())
  gauge('tollgate_active_keys', 'Key actors in memory', () => parts.keys.size)
  const usage = parts.usage
  if (usage === undefined) return
  scrapedValue(registry, 'counter', 'tollgate_units_served_total', 'Compute units of the calls served since start (docs/costs.md)', () => usage.unitsServed)
  // Four fixed label values (the rules), whatever the keys say.
  scraped(registry, 'counter', {
    name: 'tollgate_key_rule_refusals_total',
    help: "Calls refused by a key's own restrictions since start, by rule (method, contract, ip, user-agent; docs/keys.md)",
    labelNames: ['rule'],
    read: (emit) => {
      for (const [rule, n] of Object.entries(usage.keyRuleRefusals)) emit({ rule }, n)
    },
  })
}
