import type { LogFilter } from './log-bloom.js'
import type { Hex, RpcLog } from './rpc-shapes.js'

/**
 * How a log stands to an eth_getLogs filter under the clients' matching rules, which differ on one
 * point: a filter with more topic positions than the log has topics. geth (and Erigon, Nethermind,
 * Besu, which follow it) never matches such a log, trailing wildcards (null, []) included; anvil
 * and reth match it when every position past the log's last topic is a wildcard.
 * - `every-client`: every client's node answers it (geth's rule holds, so the looser one does too);
 * - `some-client`: a node of one client answers it and a node of another leaves it out (the log has
 *   fewer topics than the filter has positions, and every position past them is a wildcard);
 * - `none`: no client's node answers it.
 */
export type LogMatch = 'every-client' | 'some-client' | 'none'

/** One place of a filter: null, undefined or an empty list match anything; else any of the values. */
function oneOf(value: Hex | undefined, choice: Hex | readonly Hex[] | null | undefined): boolean {
  if (isWildcard(choice)) return true
  const options = typeof choice === 'string' ? [choice] : choice!
  const v = value?.toLowerCase()
  return options.some((o) => o.toLowerCase() === v)
}

function isWildcard(choice: Hex | readonly Hex[] | null | undefined): boolean {
  return choice === null || choice === undefined || (typeof choice !== 'string' && choice.length === 0)
}

/**
 * Whether a log matches an eth_getLogs filter as nodes read it (LogMatch): its address among the
 * filter's (OR), and at each topic position null (any), one value, or a list (OR).
 * @example logMatch(log, { address: token, topics: [TRANSFER] }) // 'every-client' for the token's Transfer logs
 * @example logMatch(anonymousLog, { topics: [null] }) // 'some-client': anvil and reth answer it, geth does not
 */
export function logMatch(log: Pick<RpcLog, 'address' | 'topics'>, filter: LogFilter): LogMatch {
  if (!oneOf(log.address, filter.address)) return 'none'
  const topics = filter.topics ?? []
  for (const [i, choice] of topics.entries()) {
    if (i < log.topics.length ? !oneOf(log.topics[i], choice) : !isWildcard(choice)) return 'none'
  }
  return topics.length > log.topics.length ? 'some-client' : 'every-client'
}
