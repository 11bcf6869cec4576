import type { LogsFilterLimit } from './logs-filter-quota.js'

/**
 * The message of a new logs filter refused by one of the hub's caps (WS_TOO_MANY_LOGS_FILTERS,
 * -32034): what was full, the setting that bounds it, and what the client can do instead.
 * @example
 * logsFilterRefusal('eth-1', 'key', 100, 100) // 'Too many logs filters: this key holds 100 distinct logs filters on eth-1, …'
 */
export function logsFilterRefusal(network: string, limit: LogsFilterLimit, held: number, max: number): string {
  switch (limit) {
    case 'key':
      return `Too many logs filters: this key holds ${held} distinct logs filters on ${network}, at most ${max} are allowed per key and network (ws.maxLogsFiltersPerKey); put several addresses and topics in one filter, reuse a filter you hold, or unsubscribe some`
    case 'account':
      return `Too many logs filters: the keys of this account hold ${held} distinct logs filters on ${network}, at most ${max} are allowed per account and network (ws.maxLogsFiltersPerAccount); put several addresses and topics in one filter, reuse a filter you hold, or unsubscribe some`
    case 'network':
      return `Too many logs filters on ${network}: the gateway holds ${held} distinct logs subscriptions on its nodes, at most ${max} (ws.maxLogsFiltersPerNetwork); subscribe to a filter already in use, or retry later`
    case 'share':
      return `Too many logs filters on ${network}: this account holds ${held} distinct logs filters and the network has ${max} free (ws.maxLogsFiltersPerNetwork), which are kept for accounts holding fewer; reuse a filter you hold, unsubscribe some, or retry later`
    default:
      return limit satisfies never
  }
}
