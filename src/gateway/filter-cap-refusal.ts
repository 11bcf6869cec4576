import { GatewayError } from '../errors/registry.js'

/** Which share of FilterPins is full: the key's, its account's, or this instance's. */
export type FilterCapLimit = 'key' | 'account' | 'instance'

/**
 * A new filter refused by a cap of FilterPins (TOO_MANY_FILTERS, -32036, in a 200 answer): which share was
 * full, the setting that bounds it, and what the client can do.
 * @example
 * filterCapRefusal('eth-1', 'key', 500, 500).message // 'Too many filters: this key holds 500 live filters on eth-1, …'
 */
export function filterCapRefusal(network: string, limit: FilterCapLimit, held: number, max: number): GatewayError {
  const polled = 'every one polled within the last minute (an idle one would have been uninstalled to make room)'
  switch (limit) {
    case 'key':
      return new GatewayError(
        'TOO_MANY_FILTERS',
        `Too many filters: this key holds ${held} live filters on ${network}, at most ${max} per key and network (limits.maxFiltersPerKey), ${polled}; uninstall filters you no longer poll (eth_uninstallFilter), or use eth_subscribe over WebSocket`,
      )
    case 'account':
      return new GatewayError(
        'TOO_MANY_FILTERS',
        `Too many filters: the keys of this account hold ${held} live filters on ${network}, at most ${max} per account and network (limits.maxFiltersPerAccount), ${polled}; uninstall filters you no longer poll (eth_uninstallFilter), or use eth_subscribe over WebSocket`,
      )
    case 'instance':
      return new GatewayError(
        'TOO_MANY_FILTERS',
        `Too many filters: this gateway instance holds ${held} live filters for all keys, at most ${max}; retry later, or use eth_subscribe over WebSocket`,
      )
    default:
      return limit satisfies never
  }
}
