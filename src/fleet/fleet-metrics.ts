import type { Registry } from 'prom-client'
import { scraped } from '../metrics/scraped.js'
import type { Fleet } from './fleet.js'

/**
 * /metrics of the fleet, read when scraped: the live instances as this one hears them, the share
 * of each key's limit each applies (1 while it sees the fleet; 1/N while cut off), the accounts
 * this instance owns and those hot now, and what it took in and sent of the limits (what sharing
 * costs it: entries in grow with what it serves and owns, not with the fleet's calls). The
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
  scraped(registry, 'gauge', {
    name: 'tollgate_fleet_owned_accounts',
    help: 'Accounts this instance owns in the fleet and heard of in the last second (or keeps hot): it judges whether they are hot',
    read: (emit) => emit({}, source.fleet()?.ownedAccounts ?? 0),
  })
  scraped(registry, 'gauge', {
    name: 'tollgate_fleet_hot_accounts',
    help: 'Accounts marked hot now, as this instance was told: their consumption is shared with every instance',
    read: (emit) => emit({}, source.fleet()?.hotAccounts() ?? 0),
  })
  scraped(registry, 'counter', {
    name: 'tollgate_fleet_limit_entries_total',
    help: 'Limits entries (an account in one message) this instance took in from the others and sent, by direction',
    labelNames: ['direction'] as const,
    read: (emit) => {
      const traffic = source.fleet()?.traffic()
      if (traffic === undefined) return
      emit({ direction: 'in' }, traffic.entriesIn)
      emit({ direction: 'out' }, traffic.entriesOut)
    },
  })
  scraped(registry, 'counter', {
    name: 'tollgate_fleet_limit_messages_total',
    help: 'Limits messages (and hot marks) this instance took in from the others and sent, by direction',
    labelNames: ['direction'] as const,
    read: (emit) => {
      const traffic = source.fleet()?.traffic()
      if (traffic === undefined) return
      emit({ direction: 'in' }, traffic.messagesIn)
      emit({ direction: 'out' }, traffic.messagesOut)
    },
  })
}
