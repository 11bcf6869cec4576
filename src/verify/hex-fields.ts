import { hexToBytes } from 'viem'
import { VerificationError, type VerifyCheck } from './errors.js'

/**
 * Reading a node's hex fields into what the encodings take, refusing what is not hex. A node that
 * answers `"balance": "12"` or a 31-byte hash must fail the check by name, not crash the verifier
 * with a TypeError that the pool would count as its own fault.
 */

const QUANTITY = /^0x(0|[0-9a-fA-F]+)$/
const DATA = /^0x([0-9a-fA-F]{2})*$/

/**
 * A JSON-RPC quantity ("0x0", "0x1a") as a bigint. Leading zeros are accepted: the encodings write
 * the canonical form, so a non-canonical hex cannot change a hash.
 * @example quantity('0x1a', 'HEADER_HASH', 'number') // 26n
 */
export function quantity(value: unknown, check: VerifyCheck, field: string): bigint {
  if (typeof value !== 'string' || !QUANTITY.test(value)) throw new VerificationError(check, field, 'a hex quantity', JSON.stringify(value))
  return BigInt(value)
}

/**
 * JSON-RPC data ("0x", "0xab01") as bytes, of `length` bytes when given (hashes, addresses, blooms).
 * @example data(header.stateRoot, 'HEADER_HASH', 'stateRoot', 32)
 */
export function data(value: unknown, check: VerifyCheck, field: string, length?: number): Uint8Array {
  if (typeof value !== 'string' || !DATA.test(value)) throw new VerificationError(check, field, 'hex data', JSON.stringify(value))
  const bytes = hexToBytes(value as `0x${string}`)
  if (length !== undefined && bytes.length !== length) throw new VerificationError(check, field, `${length} bytes`, `${bytes.length} bytes`)
  return bytes
}
