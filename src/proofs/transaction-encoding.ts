import {
  bytesToHex,
  concatHex,
  hexToBytes,
  numberToHex,
  recoverAddress,
  recoverTransactionAddress,
  serializeTransaction,
  type Signature,
  type TransactionSerializable,
  type TransactionSerializableEIP1559,
  toRlp,
} from 'viem'
import { checkFailure } from './check-failure.js'
import { data, quantity } from './hex-fields.js'
import { keccak256Hex } from './keccak.js'
import type { Hex, RpcTransaction } from './rpc-shapes.js'

/**
 * A transaction's canonical encoding (EIP-2718: legacy RLP, or type byte ‖ RLP) from its JSON-RPC
 * object, the bytes its hash and the block's transactionsRoot are made of. The encodings are
 * viem's serializers (already the gateway's dependency); this file maps the node's fields onto
 * them and keeps viem from guessing: the type comes from the object's `type`, the signature from its
 * `v`/`yParity`, `r`, `s`.
 */

/** The typed transactions this encoder knows; another type (an L2's deposit, 0x7e) is refused by name. */
export const TRANSACTION_TYPES = { '0x0': 'legacy', '0x1': 'eip2930', '0x2': 'eip1559', '0x3': 'eip4844', '0x4': 'eip7702' } as const
export type TransactionTypeHex = keyof typeof TRANSACTION_TYPES

const q = (tx: RpcTransaction, field: keyof RpcTransaction): bigint => quantity(tx[field], 'TRANSACTION_ENCODING', `transaction ${tx.hash} ${field}`)

/** A quantity viem takes as a number (chain ids, nonces): past 2^53 it would be rounded into another encoding. */
function safeNumber(value: unknown, subject: string): number {
  const n = quantity(value, 'TRANSACTION_ENCODING', subject)
  if (n > BigInt(Number.MAX_SAFE_INTEGER)) throw checkFailure('NUMBER_TOO_LARGE', { field: subject, value: n })
  return Number(n)
}
const small = (tx: RpcTransaction, field: keyof RpcTransaction): number => safeNumber(tx[field], `transaction ${tx.hash} ${field}`)

function typeOf(tx: RpcTransaction): TransactionTypeHex {
  const type = (
    tx.type === undefined ? '0x0' : `0x${quantity(tx.type, 'TRANSACTION_ENCODING', `transaction ${tx.hash} type`).toString(16)}`
  ) as TransactionTypeHex
  if (!(type in TRANSACTION_TYPES)) throw checkFailure('TRANSACTION_TYPE_UNKNOWN', { hash: tx.hash, known: Object.keys(TRANSACTION_TYPES), type: tx.type })
  return type
}

/**
 * The transaction's fields as viem's serializer takes them, and its signature.
 */
function serializable(tx: RpcTransaction): { fields: TransactionSerializable; signature: Signature } {
  const type = typeOf(tx)
  const to = tx.to === null || tx.to === undefined ? null : (tx.to.toLowerCase() as Hex)
  const common = {
    nonce: small(tx, 'nonce'),
    gas: q(tx, 'gas'),
    to,
    value: q(tx, 'value'),
    data: (tx.input ?? (tx as { data?: Hex }).data) as Hex,
  }
  data(common.data, 'TRANSACTION_ENCODING', `transaction ${tx.hash} input`)
  const r = q(tx, 'r')
  const s = q(tx, 's')
  const rs = { r: `0x${r.toString(16).padStart(64, '0')}` as Hex, s: `0x${s.toString(16).padStart(64, '0')}` as Hex }
  if (type === '0x0') {
    // The chain id of a legacy transaction lives in its v (EIP-155): viem reads it from there. A
    // chain id beside v = 27/28 (some nodes add the chain's) would make viem re-sign it as EIP-155.
    const v = q(tx, 'v')
    // Its chainId field is not encoded beside v, so it must be v's (EIP-155: v = 35 + 2 chainId + parity).
    if (v >= 35n && tx.chainId !== undefined && q(tx, 'chainId') !== (v - 35n) / 2n) {
      throw checkFailure('CHAIN_ID_NOT_V_S', { hash: tx.hash, ofV: (v - 35n) / 2n, chainId: tx.chainId })
    }
    return { fields: { type: 'legacy', ...common, gasPrice: q(tx, 'gasPrice') }, signature: { ...rs, v } }
  }
  const yParity = tx.yParity !== undefined ? Number(q(tx, 'yParity')) : Number(q(tx, 'v'))
  if (yParity !== 0 && yParity !== 1) throw checkFailure('Y_PARITY_NOT_A_BIT', { hash: tx.hash, yParity })
  // Nodes send a typed transaction's parity twice (v and yParity); only one is hashed, so the other must agree.
  if (tx.yParity !== undefined && tx.v !== undefined && Number(q(tx, 'v')) !== yParity) {
    throw checkFailure('V_NOT_Y_PARITY', { hash: tx.hash, yParity, v: tx.v })
  }
  const signature = { ...rs, yParity }
  const accessList = (tx.accessList ?? []).map((e) => ({ address: e.address, storageKeys: e.storageKeys }))
  const typed = { ...common, chainId: small(tx, 'chainId'), accessList }
  const fees = () => ({ maxFeePerGas: q(tx, 'maxFeePerGas'), maxPriorityFeePerGas: q(tx, 'maxPriorityFeePerGas') })
  switch (type) {
    case '0x1':
      return { fields: { type: 'eip2930', ...typed, gasPrice: q(tx, 'gasPrice') }, signature }
    case '0x2':
      return { fields: { type: 'eip1559', ...typed, ...fees() }, signature }
    case '0x3':
      return {
        fields: {
          type: 'eip4844',
          ...typed,
          ...fees(),
          to: to as Hex,
          maxFeePerBlobGas: q(tx, 'maxFeePerBlobGas'),
          blobVersionedHashes: tx.blobVersionedHashes ?? [],
        },
        signature,
      }
    case '0x4':
      return {
        fields: {
          type: 'eip7702',
          ...typed,
          ...fees(),
          authorizationList: (tx.authorizationList ?? []).map((a, i) => ({
            chainId: safeNumber(a.chainId, `transaction ${tx.hash} authorization ${i} chainId`),
            address: a.address,
            nonce: safeNumber(a.nonce, `transaction ${tx.hash} authorization ${i} nonce`),
            yParity: safeNumber(a.yParity, `transaction ${tx.hash} authorization ${i} yParity`),
            r: a.r,
            s: a.s,
          })),
        },
        signature,
      }
  }
}

/**
 * The transaction's canonical encoding (the network form without a blob sidecar, as blocks hold it).
 * @throws VerificationError TRANSACTION_ENCODING when a field is missing or malformed, or the type unknown
 * @example keccak256(encodeTransaction(tx)) === tx.hash
 */
export function encodeTransaction(tx: RpcTransaction): Uint8Array {
  const { fields, signature } = serializable(tx)
  const held = tipAboveCap(fields)
  if (held !== undefined) return hexToBytes(encodeTipAboveCap(held, signature))
  let encoded: Hex
  try {
    encoded = serializeTransaction(fields, signature)
  } catch (cause) {
    // viem refuses what no valid chain holds (a tip above the fee cap, a zero chain id): so do we.
    throw checkFailure('TRANSACTION_NOT_ENCODABLE', { hash: tx.hash, why: (cause as Error).message.split('\n')[0]! }, { cause })
  }
  return hexToBytes(encoded)
}

/**
 * Check that a transaction's fields hash to its `hash` (keccak-256 of its encoding).
 * @returns the encoding, for the transactions root
 * @throws VerificationError TRANSACTION_HASH when a field was altered (or TRANSACTION_ENCODING)
 * @example verifyTransaction(await node.rpc('eth_getTransactionByHash', [hash]))
 */
export function verifyTransaction(tx: RpcTransaction): Uint8Array {
  const encoded = encodeTransaction(tx)
  const computed = keccak256Hex(encoded)
  const claimed = String(tx.hash).toLowerCase()
  if (computed !== claimed) throw checkFailure('TRANSACTION_HASH_FROM_FIELDS', { hash: tx.hash, claimed, computed })
  return encoded
}

/**
 * Check a transaction's `from` against the signer its signature recovers to (secp256k1): `from` is
 * in no hash, so without this a node could name any sender for a checked transaction.
 * @param encoded its encoding, as verifyTransaction returned it
 * @throws VerificationError TRANSACTION_SENDER
 * @example await verifyTransactionSender(tx, verifyTransaction(tx))
 */
export async function verifyTransactionSender(tx: RpcTransaction, encoded: Uint8Array): Promise<void> {
  if (tx.from === undefined) return
  let signer: string
  try {
    const { fields, signature } = serializable(tx)
    const held = tipAboveCap(fields)
    signer = (
      held !== undefined
        ? await recoverAddress({ hash: keccak256Hex(hexToBytes(encodeTipAboveCap(held))) as Hex, signature })
        : await recoverTransactionAddress({ serializedTransaction: bytesToHex(encoded) as never })
    ).toLowerCase()
  } catch (cause) {
    throw checkFailure('SIGNATURE_RECOVERS_NOBODY', { hash: tx.hash }, { cause })
  }
  if (signer !== String(tx.from).toLowerCase()) throw checkFailure('SENDER_NOT_SIGNER', { hash: tx.hash, signer, from: tx.from })
}

/**
 * A 1559 transaction whose tip is above its fee cap: viem refuses to encode or parse one, and yet
 * chains hold them (Ganache 7.9.2 signs its own with a 1 gwei tip and a cap of the base fee, below
 * 1 gwei once the base fee falls). It pays the cap, as EIP-1559 reads min(tip, cap - base fee).
 */
function tipAboveCap(fields: TransactionSerializable): TransactionSerializableEIP1559 | undefined {
  if (fields.type !== 'eip1559') return undefined
  const { maxFeePerGas, maxPriorityFeePerGas } = fields
  return maxFeePerGas !== undefined && maxPriorityFeePerGas !== undefined && maxPriorityFeePerGas > maxFeePerGas ? fields : undefined
}

/** EIP-1559's encoding, 0x02 ‖ RLP of its fields (and the signature, when given: else what is signed), as viem makes it. */
function encodeTipAboveCap(f: TransactionSerializableEIP1559, signature?: Signature): Hex {
  const n = (v: bigint | number | undefined) => (v === undefined || BigInt(v) === 0n ? '0x' : numberToHex(BigInt(v)))
  const list = [
    n(f.chainId),
    n(f.nonce),
    n(f.maxPriorityFeePerGas),
    n(f.maxFeePerGas),
    n(f.gas),
    f.to ?? '0x',
    n(f.value),
    f.data ?? '0x',
    (f.accessList ?? []).map((e) => [e.address, [...e.storageKeys]]),
  ] as (Hex | Hex[] | (Hex | Hex[])[][])[]
  if (signature !== undefined) list.push(n(signature.yParity), n(BigInt(signature.r)), n(BigInt(signature.s)))
  return concatHex(['0x02', toRlp(list as never)])
}
