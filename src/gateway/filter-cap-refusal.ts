import { refusal } from '../errors/messages.js'
import type { GatewayError } from '../errors/registry.js'

/** Which share of FilterPins is full: the key's, its account's, or this instance's. */
export type FilterCapLimit = 'key' | 'account' | 'instance'

/**
 * A new filter refused by a cap of FilterPins (TOO_MANY_FILTERS, -32036, in a 200 answer): which share was
 * full, the setting that bounds it, and what the client can do.
 * @example
 * filterCapRefusal('eth-1', 'key', 500, 500).message // 'Too many filters: this key holds 500 live filters on eth-1, …'
 */
export function filterCapRefusal(network: string, limit: FilterCapLimit, held: number, max: number): GatewayError {
  switch (limit) {
    case 'key':
      return refusal('KEY_FILTERS_FULL', { network, held, max })
    case 'account':
      return refusal('ACCOUNT_FILTERS_FULL', { network, held, max })
    case 'instance':
      return refusal('INSTANCE_FILTERS_FULL', { held, max })
    default:
      return limit satisfies never
  }
}
