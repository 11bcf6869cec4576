import { randomBytes } from 'node:crypto'

/** Digits, upper case, lower case: the alphabet of keys and key ids (URL- and copy-safe). */
export const BASE62_ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

const BASE = 62n

/** `value` in base62, left-padded with '0' to exactly `width` digits (value must fit). */
export function encodeBase62(value: bigint, width: number): string {
  let out = ''
  let rest = value
  for (let i = 0; i < width; i++) {
    out = BASE62_ALPHABET[Number(rest % BASE)] + out
    rest /= BASE
  }
  if (rest !== 0n) throw new RangeError(`value does not fit in ${width} base62 digits`)
  return out
}

/**
 * `length` uniformly random base62 characters. Rejection sampling: taking `byte % 62` of
 * every byte would make the first 8 characters of the alphabet more likely than the others.
 */
export function randomBase62(length: number): string {
  let out = ''
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte >= 248) continue // 248 = 4 × 62: bytes above would bias the low digits
      out += BASE62_ALPHABET[byte % 62]
      if (out.length === length) break
    }
  }
  return out
}
