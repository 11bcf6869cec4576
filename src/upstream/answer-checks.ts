import type { Answer } from './answer.js'

/**
 * What the pool reads in a node's answer to judge the node, not the call: whether the answer is
 * empty because the node is behind, which head it showed (whether it lacks the method:
 * method-missing.ts).
 * Each reads only short answers (errors and nulls are small), never a large result.
 */

/** Methods whose `null` result means "no such thing", which from a node behind may only mean "not yet". */
const NULL_WHEN_BEHIND: ReadonlySet<string> = new Set([
  'eth_getBlockByNumber',
  'eth_getBlockByHash',
  'eth_getBlockReceipts',
  'eth_getTransactionByHash',
  'eth_getTransactionReceipt',
  'eth_getTransactionByBlockHashAndIndex',
  'eth_getTransactionByBlockNumberAndIndex',
  'eth_getBlockTransactionCountByHash',
  'eth_getBlockTransactionCountByNumber',
  'eth_getUncleCountByBlockHash',
  'eth_getUncleCountByBlockNumber',
  'eth_getHeaderByNumber',
  'eth_getHeaderByHash',
])

/** Errors of a node asked for a block it does not have yet (geth, erigon, nethermind, reth, anvil). */
const NOT_THERE_YET = /header not found|unknown block|block not found|block height is \d+ but requested was|requested block .{0,80} not found/i

const SHORT = 600

/** The answer may be empty only because the node has not reached the block yet. */
export function emptyWhenBehind(method: string, answer: Answer): boolean {
  if (answer.bytes !== undefined) return false
  const text = answer.text
  if (text.length > SHORT) return false
  if (answer.isError) return NOT_THERE_YET.test(text)
  return NULL_WHEN_BEHIND.has(method) && /"result"\s*:\s*null/.test(text)
}

/** The block number an eth_blockNumber answer gives, or undefined. */
export function blockNumberIn(answer: Answer): number | undefined {
  if (answer.isError || answer.bytes !== undefined) return undefined
  const hex = /"result"\s*:\s*"(0x[0-9a-fA-F]{1,16})"/.exec(answer.text)?.[1]
  return hex === undefined ? undefined : Number.parseInt(hex, 16)
}
