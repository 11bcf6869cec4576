import type { Registry } from 'prom-client'
import { scraped } from '../metrics/scraped.js'
import type { Fleet } from './fleet.js'

/**
 * /metrics of the fleet, read when scraped: the live instances as this one hears them, and the
 * share of each key's limit each applies (1 while it sees the fleet; 1/N while cut off). The
 * instance label is bounded by the fleet's size.
 */
export function registerFleetMetrics(registry: Registry, source: { fleet(): Fleet | undefined }): void {
  scraped(registry, 'gauge', {
    name: 'tollgate_fleet_instances',
    help: 'Live instances of the fleet, this one included, as this instance hears them',
    read: (emit) => emit({}, source.fleet()?.members().length ?? 1),
  })
  scraped(registry, 'gauge', {
    name: 'tollgate_fleet_share',
    help: "The part of each key's limit an instance applies (1: shared with the fleet; 1/N: cut off from it)",
    labelNames: ['instance', 'address'] as const,
    read: (emit) => {
      for (const m of source.fleet()?.members() ?? []) emit({ instance: m.id, address: m.address }, m.share)
    },
  })
}
