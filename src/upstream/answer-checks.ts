import type { Answer } from './answer.js'

/**
 * What the pool reads in a node's answer to judge the node, not the call: whether the answer is
 * empty because the node is behind, whether the node lacks the method, which head it showed.
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

/** "Method not found / not supported" as nodes say it (-32601, EIP-1474's -32004, and the words). */
const METHOD_MISSING_CODES: ReadonlySet<number> = new Set([-32601, -32004])
const METHOD_MISSING_WORDS = /method .{0,80}(?:not found|does not exist|is not available|not supported|unsupported)|unsupported method|method not allowed/i

const SHORT = 600

/** The answer may be empty only because the node has not reached the block yet. */
export function emptyWhenBehind(method: string, answer: Answer): boolean {
  if (answer.bytes !== undefined) return false
  const text = answer.text
  if (text.length > SHORT) return false
  if (answer.isError) return NOT_THERE_YET.test(text)
  return NULL_WHEN_BEHIND.has(method) && /"result"\s*:\s*null/.test(text)
}

/** The node says it does not serve the method (another node of the kind may). */
export function saysMethodMissing(answer: Answer): boolean {
  if (!answer.isError || answer.bytes !== undefined) return false
  const text = answer.text
  if (text.length > SHORT) return false
  const code = /"code"\s*:\s*(-?\d+)/.exec(text)?.[1]
  return (code !== undefined && METHOD_MISSING_CODES.has(Number(code))) || METHOD_MISSING_WORDS.test(text)
}

/** The block number an eth_blockNumber answer gives, or undefined. */
export function blockNumberIn(answer: Answer): number | undefined {
  if (answer.isError || answer.bytes !== undefined) return undefined
  const hex = /"result"\s*:\s*"(0x[0-9a-fA-F]{1,16})"/.exec(answer.text)?.[1]
  return hex === undefined ? undefined : Number.parseInt(hex, 16)
}
