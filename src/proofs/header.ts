import { RLP } from '@ethereumjs/rlp'
import { checkFailure } from './check-failure.js'
import { data, quantity } from './hex-fields.js'
import { keccak256Hex } from './keccak.js'
import type { Hex, RpcHeader } from './rpc-shapes.js'

/**
 * A block header's RLP encoding and hash, from the JSON-RPC block object. The header is a list whose
 * fields each fork appends to; which fork a header belongs to is read from which fields it has, as
 * clients decode it (geth's `rlp:"optional"`), so that one function serves every chain and every
 * height without a fork schedule. The RLP itself is @ethereumjs/rlp's; this file only says which
 * field goes where and what kind of value it is.
 */

/** How a field is written: a number (minimal big-endian), or bytes of a fixed or free length. */
type FieldKind = 'quantity' | 'bytes' | 20 | 32 | 8 | 256

/** The fields every header has (Frontier on), in their order. */
const BASE_FIELDS: ReadonlyArray<readonly [keyof RpcHeader, FieldKind]> = [
  ['parentHash', 32],
  ['sha3Uncles', 32],
  ['miner', 20],
  ['stateRoot', 32],
  ['transactionsRoot', 32],
  ['receiptsRoot', 32],
  ['logsBloom', 256],
  ['difficulty', 'quantity'],
  ['number', 'quantity'],
  ['gasLimit', 'quantity'],
  ['gasUsed', 'quantity'],
  ['timestamp', 'quantity'],
  ['extraData', 'bytes'],
  ['mixHash', 32],
  ['nonce', 8],
]

/** A field a fork appended to the header, after the base fields, in this order. */
export interface ForkField {
  readonly field: keyof RpcHeader
  readonly kind: FieldKind
  readonly fork: HeaderFork
}

/** The forks that changed the header's shape; `frontier` is a header of the base fields alone. */
export type HeaderFork = 'frontier' | 'london' | 'shanghai' | 'cancun' | 'prague'

export const FORK_FIELDS: readonly ForkField[] = [
  { field: 'baseFeePerGas', kind: 'quantity', fork: 'london' }, // EIP-1559
  { field: 'withdrawalsRoot', kind: 32, fork: 'shanghai' }, // EIP-4895
  { field: 'blobGasUsed', kind: 'quantity', fork: 'cancun' }, // EIP-4844
  { field: 'excessBlobGas', kind: 'quantity', fork: 'cancun' }, // EIP-4844
  { field: 'parentBeaconBlockRoot', kind: 32, fork: 'cancun' }, // EIP-4788
  { field: 'requestsHash', kind: 32, fork: 'prague' }, // EIP-7685
]

/**
 * The fork fields a header carries: the first ones of FORK_FIELDS, with no gap. A header with a
 * later field and an earlier one missing is refused: no client encodes it, and guessing the missing
 * value would make a hash of a header no node sent.
 * @example headerForkFields(block).map((f) => f.field) // ['baseFeePerGas', 'withdrawalsRoot', ...]
 */
export function headerForkFields(header: RpcHeader): readonly ForkField[] {
  const present = FORK_FIELDS.map((f) => header[f.field] !== undefined && header[f.field] !== null)
  const count = present.indexOf(false) === -1 ? present.length : present.indexOf(false)
  const stray = present.findIndex((has, i) => has && i > count)
  if (stray !== -1) {
    const missing = FORK_FIELDS[count]!.field
    throw checkFailure('FORK_FIELD_WITHOUT_EARLIER', { field: FORK_FIELDS[stray]!.field, missing })
  }
  return FORK_FIELDS.slice(0, count)
}

/**
 * The latest fork whose fields the header carries.
 * @example headerFork(mainnetBlock20000000) // 'cancun'
 */
export function headerFork(header: RpcHeader): HeaderFork {
  return headerForkFields(header).at(-1)?.fork ?? 'frontier'
}

function fieldValue(header: RpcHeader, field: keyof RpcHeader, kind: FieldKind): bigint | Uint8Array {
  const value = header[field]
  if (kind === 'quantity') return quantity(value, 'HEADER_FIELDS', field)
  return data(value, 'HEADER_FIELDS', field, kind === 'bytes' ? undefined : kind)
}

/**
 * The header's RLP encoding: the base fields, then each fork field it carries, in order.
 * @example keccak256(encodeHeader(block)) === block.hash
 */
export function encodeHeader(header: RpcHeader): Uint8Array {
  const fields = [...BASE_FIELDS.map(([field, kind]) => ({ field, kind })), ...headerForkFields(header)]
  return RLP.encode(fields.map(({ field, kind }) => fieldValue(header, field, kind)))
}

/**
 * The header's hash computed from its fields (keccak-256 of its RLP encoding).
 * @example headerHash(block) // '0x09dd69fb...'
 */
export function headerHash(header: RpcHeader): Hex {
  return keccak256Hex(encodeHeader(header))
}

/**
 * Check that the header's fields hash to its `hash`: then every field (state root, transactions,
 * receipts and withdrawals roots, bloom) is what the block with that hash holds. Whether that hash
 * is the chain's is another question: the trust source's (docs/verified-answers.md).
 * @returns the hash, lowercase
 * @throws VerificationError HEADER_HASH when a field was altered, HEADER_FIELDS when one is malformed
 * @example
 * const hash = verifyHeader(await node.rpc('eth_getBlockByNumber', ['latest', false]))
 */
export function verifyHeader(header: RpcHeader): Hex {
  const computed = headerHash(header)
  const claimed = typeof header.hash === 'string' ? header.hash.toLowerCase() : String(header.hash)
  if (computed !== claimed) throw checkFailure('HEADER_HASH_FROM_FIELDS', { block: header.number, claimed, computed })
  return computed
}
