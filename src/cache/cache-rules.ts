import { isHexQuantity } from '../rpc/hex-quantity.js'

/**
 * Which answers can no longer change, decided per method from its params (before the call) and,
 * for calls by hash, from the block number in its result (after it). Pure, so that every rule is
 * tested without nodes.
 *
 * The principle: an answer is final when it describes a block at or below the network's finalized
 * block (a reorg cannot change it), or state named by a block hash (the hash commits to it). A
 * null result (unknown block or transaction, not mined yet) and errors are never final.
 */
export type CacheRule =
  /** Never changes (eth_chainId). */
  | { readonly final: 'always' }
  /** Final when this block is at or below the finalized one. */
  | { readonly final: 'block'; readonly block: number }
  /** State at a block hash: the hash commits to it. */
  | { readonly final: 'by-hash' }
  /** Final when the block number read from the result is at or below the finalized one. */
  | { readonly final: 'result'; readonly blockOf: (result: unknown) => number | undefined }

/** Methods whose first param is a block number (or tag) and whose answer describes that block. */
const BY_BLOCK_NUMBER: ReadonlySet<string> = new Set([
  'eth_getBlockByNumber',
  'eth_getBlockTransactionCountByNumber',
  'eth_getUncleCountByBlockNumber',
  'eth_getTransactionByBlockNumberAndIndex',
  'eth_getUncleByBlockNumberAndIndex',
  'eth_getHeaderByNumber',
  'debug_getRawBlock',
  'debug_getRawHeader',
  'debug_getRawReceipts',
  'debug_traceBlockByNumber',
  'trace_block',
])

/** State reads, with where their block parameter is (number, tag or EIP-1898 object). */
const STATE_AT: Readonly<Record<string, number>> = {
  eth_call: 1,
  eth_getBalance: 1,
  eth_getCode: 1,
  eth_getTransactionCount: 1,
  eth_getStorageAt: 2,
  eth_getProof: 2,
}

const field = (name: string) => (result: unknown) =>
  result !== null && typeof result === 'object' ? blockNumberOf((result as Record<string, unknown>)[name]) : undefined
const firstItemField = (name: string) => (result: unknown) => (Array.isArray(result) && result.length > 0 ? field(name)(result[0]) : undefined)

/** Methods answered by hash, with where the block number is in their result. */
const BY_HASH: Readonly<Record<string, (result: unknown) => number | undefined>> = {
  eth_getBlockByHash: field('number'),
  eth_getHeaderByHash: field('number'),
  eth_getTransactionByHash: field('blockNumber'),
  eth_getTransactionReceipt: field('blockNumber'),
  eth_getTransactionByBlockHashAndIndex: field('blockNumber'),
  trace_transaction: firstItemField('blockNumber'),
}

/** The rule of answers that never change: one object, not one per call (a batch asks per call). */
const ALWAYS: CacheRule = Object.freeze({ final: 'always' })

/**
 * How to tell whether a call's answer is final, or undefined when it never is (tags such as
 * latest, pending, safe and finalized move; filters, transactions, the pool, gas prices change).
 */
export function cacheRuleFor(method: string, params: unknown): CacheRule | undefined {
  if (method === 'eth_chainId') return ALWAYS
  const p = Array.isArray(params) ? params : undefined
  if (p === undefined) return undefined
  if (BY_BLOCK_NUMBER.has(method)) return blockRule(p[0])
  if (method in BY_HASH) return typeof p[0] === 'string' ? { final: 'result', blockOf: BY_HASH[method] } : undefined
  if (method === 'eth_getBlockReceipts') {
    const block = blockNumberOf(p[0])
    if (block !== undefined) return { final: 'block', block }
    return isHashParam(p[0]) ? { final: 'result', blockOf: firstItemField('blockNumber') } : undefined
  }
  if (method === 'eth_getLogs') return logsRule(p[0])
  if (method in STATE_AT) {
    const at = p[STATE_AT[method]]
    if (isHashParam(at)) return { final: 'by-hash' }
    return blockRule(at)
  }
  return undefined
}

/** Is an answer final, given its rule, its parsed result and the finalized block (undefined: not known yet)? */
export function isFinal(rule: CacheRule, result: unknown, finalized: number | undefined): boolean {
  if (result === null || result === undefined) return false
  switch (rule.final) {
    case 'always':
    case 'by-hash':
      return true
    case 'block':
      return finalized !== undefined && rule.block <= finalized
    case 'result': {
      const block = rule.blockOf(result)
      return block !== undefined && finalized !== undefined && block <= finalized
    }
  }
}

/** Could the answer be final before the call (a block above the finalized one cannot be)? */
export function mayBeFinal(rule: CacheRule, finalized: number | undefined): boolean {
  if (rule.final === 'block') return finalized !== undefined && rule.block <= finalized
  if (rule.final === 'result') return finalized !== undefined
  return true
}

function blockRule(param: unknown): CacheRule | undefined {
  const block = blockNumberOf(param)
  return block === undefined ? undefined : { final: 'block', block }
}

/** A numeric range (both ends numbers) is final when its end is; a blockHash filter by its logs. */
function logsRule(filter: unknown): CacheRule | undefined {
  if (filter === null || typeof filter !== 'object' || Array.isArray(filter)) return undefined
  const f = filter as Record<string, unknown>
  if (f.blockHash !== undefined) return typeof f.blockHash === 'string' ? { final: 'result', blockOf: firstItemField('blockNumber') } : undefined
  const from = blockNumberOf(f.fromBlock)
  const to = blockNumberOf(f.toBlock)
  if (from === undefined || to === undefined || from > to) return undefined
  return { final: 'block', block: to }
}

/** A block hash as a parameter: a 32-byte hex string, or EIP-1898 `{blockHash}` not asking for canonicity. */
function isHashParam(param: unknown): boolean {
  if (typeof param === 'string') return /^0x[0-9a-fA-F]{64}$/.test(param)
  if (param === null || typeof param !== 'object') return false
  const p = param as Record<string, unknown>
  // requireCanonical makes the answer depend on whether the block is still on the chain.
  return typeof p.blockHash === 'string' && p.requireCanonical !== true
}

/** A block number from a hex quantity, `earliest` or `{blockNumber}`; undefined for tags and anything else. */
export function blockNumberOf(param: unknown): number | undefined {
  if (typeof param === 'string') {
    if (param === 'earliest') return 0
    return isHexQuantity(param, 13) ? parseInt(param, 16) : undefined
  }
  if (param !== null && typeof param === 'object' && 'blockNumber' in param) return blockNumberOf((param as { blockNumber: unknown }).blockNumber)
  return undefined
}
