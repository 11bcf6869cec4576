import type { Hex } from '../proofs/rpc-shapes.js'

/** The block a state read names, as the trusted headers resolve it. */
export type BlockRef =
  | { readonly tag: 'latest' | 'safe' | 'finalized' | 'earliest' | 'pending' }
  | { readonly number: number }
  | { readonly hash: Hex; readonly requireCanonical: boolean }

const TAGS: ReadonlySet<string> = new Set(['latest', 'safe', 'finalized', 'earliest', 'pending'])
const QUANTITY = /^0x(0|[1-9a-fA-F][0-9a-fA-F]{0,13})$/
const HASH = /^0x[0-9a-fA-F]{64}$/

/**
 * A block parameter (a tag, a number, or an EIP-1898 object `{blockHash, requireCanonical}` /
 * `{blockNumber}`) as a BlockRef; undefined when it is none of these (then the node's own error
 * is the answer: see VerifiedStateReads).
 * @example blockRefOf({ blockHash: '0xab…', requireCanonical: true }) // { hash: '0xab…', requireCanonical: true }
 */
export function blockRefOf(param: unknown): BlockRef | undefined {
  if (typeof param === 'string') {
    if (TAGS.has(param)) return { tag: param as 'latest' }
    return QUANTITY.test(param) ? { number: Number.parseInt(param, 16) } : undefined
  }
  if (typeof param !== 'object' || param === null) return undefined
  const o = param as { blockHash?: unknown; blockNumber?: unknown; requireCanonical?: unknown }
  if (typeof o.blockHash === 'string' && o.blockNumber === undefined) {
    return HASH.test(o.blockHash) ? { hash: o.blockHash.toLowerCase() as Hex, requireCanonical: o.requireCanonical === true } : undefined
  }
  if (o.blockHash === undefined && typeof o.blockNumber === 'string') return blockRefOf(o.blockNumber)
  return undefined
}
