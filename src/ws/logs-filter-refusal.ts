import { MESSAGES } from '../errors/messages.js'
import type { LogsFilterLimit } from './logs-filter-quota.js'

/**
 * The message of a new logs filter refused by one of the hub's caps (WS_TOO_MANY_LOGS_FILTERS,
 * -32034): what was full, the setting that bounds it, and what the client can do instead (the
 * words are in MESSAGES).
 * @example
 * logsFilterRefusal('eth-1', 'key', 100, 100) // 'Too many logs filters: this key holds 100 distinct logs filters on eth-1, …'
 */
export function logsFilterRefusal(network: string, limit: LogsFilterLimit, held: number, max: number): string {
  switch (limit) {
    case 'key':
      return MESSAGES.KEY_LOGS_FILTERS_FULL.text({ network, held, max })
    case 'account':
      return MESSAGES.ACCOUNT_LOGS_FILTERS_FULL.text({ network, held, max })
    case 'network':
      return MESSAGES.NETWORK_LOGS_FILTERS_FULL.text({ network, held, max })
    case 'share':
      return MESSAGES.SHARE_LOGS_FILTERS_FULL.text({ network, held, max })
    default:
      return limit satisfies never
  }
}
