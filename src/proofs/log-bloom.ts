import { data } from './hex-fields.js'
import { keccak256Bytes } from './keccak.js'
import type { Hex, RpcLog } from './rpc-shapes.js'

/**
 * The 2048-bit log bloom of headers and receipts (yellow paper, M3:2048): each log's address and
 * topics set three bits each, taken from the first six bytes of their keccak-256. A bloom has false
 * positives and no false negatives: a block whose (hash-checked) bloom lacks a filter's bits holds
 * no log the filter matches, which is what lets eth_getLogs skip it and still be complete.
 * Written here because no kept library has it alone (@ethereumjs/vm's Bloom comes with the VM);
 * it is checked against anvil's receipt blooms in test/verify.
 */

export const BLOOM_BYTES = 256

/** The three bit positions (0..2047) a value sets. */
function bloomBits(value: Uint8Array): [number, number, number] {
  const hash = keccak256Bytes(value)
  const bit = (i: number): number => ((hash[i]! << 8) | hash[i + 1]!) & 2047
  return [bit(0), bit(2), bit(4)]
}

/** Bit n counts from the end: byte 255 holds bits 0..7 (the bloom is a big-endian 2048-bit number). */
const byteOf = (bit: number): number => BLOOM_BYTES - 1 - (bit >> 3)
const maskOf = (bit: number): number => 1 << (bit & 7)

/**
 * Whether the bloom may hold `value` (an address or a topic): false means it certainly does not.
 * @example bloomMayContain(header.logsBloom, '0xddf252ad…') // the Transfer topic
 */
export function bloomMayContain(bloom: Hex | Uint8Array, value: Hex | Uint8Array): boolean {
  const bytes = typeof bloom === 'string' ? data(bloom, 'HEADER_FIELDS', 'logsBloom', BLOOM_BYTES) : bloom
  const v = typeof value === 'string' ? data(value, 'HEADER_FIELDS', 'bloom value') : value
  return bloomBits(v).every((bit) => (bytes[byteOf(bit)]! & maskOf(bit)) !== 0)
}

/**
 * The bloom of a list of logs (a receipt's; the OR of a block's receipts is the header's).
 * @example bytesToHex(logsBloom(receipt.logs)) === receipt.logsBloom
 */
export function logsBloom(logs: readonly Pick<RpcLog, 'address' | 'topics'>[]): Uint8Array {
  const bloom = new Uint8Array(BLOOM_BYTES)
  for (const log of logs) {
    for (const value of [log.address, ...log.topics]) {
      for (const bit of bloomBits(data(value, 'RECEIPTS_ROOT', 'log address or topic'))) bloom[byteOf(bit)]! |= maskOf(bit)
    }
  }
  return bloom
}

/** An eth_getLogs filter's matching part: addresses OR-ed; per topic position null (any), one, or a list OR-ed. */
export interface LogFilter {
  address?: Hex | readonly Hex[] | null
  topics?: ReadonlyArray<Hex | readonly Hex[] | null>
}

/** An empty list or null at a place matches anything, as nodes read it. */
function anyOf(bloom: Uint8Array, choice: Hex | readonly Hex[] | null | undefined): boolean {
  if (choice === null || choice === undefined) return true
  const options = typeof choice === 'string' ? [choice] : choice
  return options.length === 0 || options.some((value) => bloomMayContain(bloom, value))
}

/**
 * Whether a block whose header has this bloom may hold a log the filter matches. False is a proof
 * (given the header's hash is checked) that it holds none; true means "fetch its receipts and see".
 * @example
 * const candidates = headers.filter((h) => bloomMayMatch(h.logsBloom, { address: token, topics: [TRANSFER, null, to] }))
 */
export function bloomMayMatch(bloom: Hex | Uint8Array, filter: LogFilter): boolean {
  const bytes = typeof bloom === 'string' ? data(bloom, 'HEADER_FIELDS', 'logsBloom', BLOOM_BYTES) : bloom
  return anyOf(bytes, filter.address) && (filter.topics ?? []).every((position) => anyOf(bytes, position))
}
