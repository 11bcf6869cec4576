import type { LogFilter } from './log-bloom.js'
import type { Hex, RpcLog } from './rpc-shapes.js'

/** One place of a filter: null, undefined or an empty list match anything; else any of the values. */
function oneOf(value: Hex | undefined, choice: Hex | readonly Hex[] | null | undefined): boolean {
  if (choice === null || choice === undefined) return true
  const options = typeof choice === 'string' ? [choice] : choice
  if (options.length === 0) return true
  const v = value?.toLowerCase()
  return options.some((o) => o.toLowerCase() === v)
}

/**
 * Whether a log matches an eth_getLogs filter as nodes read it: its address among the filter's
 * (OR), and at each topic position null (any), one value, or a list (OR); a log with fewer topics
 * than the filter has positions does not match (geth's rule, trailing nulls included).
 * @example logMatches(log, { address: token, topics: [TRANSFER] }) // true for the token's Transfer logs
 */
export function logMatches(log: Pick<RpcLog, 'address' | 'topics'>, filter: LogFilter): boolean {
  if (!oneOf(log.address, filter.address)) return false
  const topics = filter.topics ?? []
  // As geth: a filter naming more positions than the log has topics never matches it, nulls included.
  if (topics.length > log.topics.length) return false
  return topics.every((choice, i) => oneOf(log.topics[i], choice))
}
