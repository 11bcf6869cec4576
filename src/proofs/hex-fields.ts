import type { VerifyCheck } from './errors.js'
import { checkFailure } from './check-failure.js'
import type { Hex } from './rpc-shapes.js'

/**
 * Reading a node's hex fields into what the encodings take, refusing what is not hex. A node that
 * answers `"balance": "12"` or a 31-byte hash must fail the check by name, not crash the verifier
 * with a TypeError that the pool would count as its own fault.
 */

const QUANTITY = /^0x(0|[0-9a-fA-F]+)$/

/**
 * A JSON-RPC quantity ("0x0", "0x1a") as a bigint. Leading zeros are accepted: the encodings write
 * the canonical form, so a non-canonical hex cannot change a hash.
 * @example quantity('0x1a', 'HEADER_HASH', 'number') // 26n
 */
export function quantity(value: unknown, check: VerifyCheck, field: string): bigint {
  if (typeof value !== 'string' || !QUANTITY.test(value)) throw checkFailure('NOT_A_QUANTITY', { check, field, value })
  return BigInt(value)
}

/**
 * JSON-RPC data ("0x", "0xab01") as bytes, of `length` bytes when given (hashes, addresses, blooms).
 * @example data(header.stateRoot, 'HEADER_HASH', 'stateRoot', 32)
 */
export function data(value: unknown, check: VerifyCheck, field: string, length?: number): Uint8Array {
  const bytes = typeof value === 'string' ? hexBytes(value) : undefined
  if (bytes === undefined) throw checkFailure('NOT_HEX_DATA', { check, field, value })
  if (length !== undefined && bytes.length !== length) throw checkFailure('DATA_LENGTH', { check, field, length, bytes: bytes.length })
  return bytes
}

/** 0x and whole bytes of hex. */
const HEX_DATA = /^0x(?:[0-9a-fA-F]{2})*$/

/**
 * JSON-RPC data as lowercase hex, checked as `data` checks it, where only the text is compared
 * (an account's hashes against its proven leaf): no bytes made and written back as hex.
 * @example hexData(proof.codeHash, 'ACCOUNT_PROOF', 'codeHash', 32) // '0xc5d2…a470'
 */
export function hexData(value: unknown, check: VerifyCheck, field: string, length?: number): Hex {
  if (typeof value !== 'string' || !HEX_DATA.test(value)) throw checkFailure('NOT_HEX_DATA', { check, field, value })
  const bytes = (value.length - 2) / 2
  if (length !== undefined && bytes !== length) throw checkFailure('DATA_LENGTH', { check, field, length, bytes })
  return value.toLowerCase() as Hex
}

/**
 * 0x-hex as bytes, or undefined when it is not "0x" and whole bytes of hex. Node's decoder reads
 * hex at about 1 µs a trie node, where viem's hexToBytes (a character at a time) took 8: a proof's
 * nodes are read on every verified read. It stops at the first character that is not hex and
 * drops an odd last nibble, so the length says whether all of it was read. A plain Uint8Array
 * view, not a Buffer (whose slice() is a view where Uint8Array's is a copy).
 * @example hexBytes('0xab01') // Uint8Array [0xab, 0x01]; hexBytes('0xabz1') // undefined
 */
export function hexBytes(hex: string): Uint8Array | undefined {
  if (hex.length % 2 !== 0 || hex.charCodeAt(0) !== 48 /* 0 */ || hex.charCodeAt(1) !== 120 /* x */) return undefined
  const read = Buffer.from(hex.slice(2), 'hex')
  if (read.length * 2 !== hex.length - 2) return undefined
  return new Uint8Array(read.buffer, read.byteOffset, read.length)
}
