import { hash, randomBytes } from 'node:crypto'
import { BASE62_ALPHABET, encodeBase62, randomBase62 } from './base62.js'
import { CRC32_START, crc32, crc32End, crc32Step } from './crc32.js'

/**
 * API keys: `tg_` + 32 random base62 characters + 6 base62 characters of a CRC-32 of what
 * precedes them, 41 characters in all (e.g. `tg_4xQ…Zk2a1Bc9`).
 *
 * Like GitHub's tokens: the prefix lets secret scanners recognise a leaked key, and the
 * checksum lets the gateway refuse a mistyped or truncated key without a lookup.
 */
const API_KEY_PREFIX = 'tg_'
const RANDOM_LENGTH = 32
const CHECKSUM_LENGTH = 6
export const API_KEY_LENGTH = API_KEY_PREFIX.length + RANDOM_LENGTH + CHECKSUM_LENGTH

const KEY_ID_PREFIX = 'key_'
const KEY_ID_RANDOM_LENGTH = 16

// 24 random bytes hold 2^192 values, 32 base62 digits only 62^32 ≈ 2^190.5. Reducing modulo
// 62^32 would make some keys three times as likely as others; accepting only values below
// 2 × 62^32 (about 71 % of draws) and then reducing keeps every key equally likely.
const KEY_SPACE = 62n ** BigInt(RANDOM_LENGTH)
const ACCEPT_BELOW = 2n * KEY_SPACE

const BODY_LENGTH = API_KEY_LENGTH - CHECKSUM_LENGTH

/** The value of each base62 digit by its character code (ASCII); -1 for every other character. */
const DIGIT_VALUE = (() => {
  const table = new Int8Array(128).fill(-1)
  for (let i = 0; i < BASE62_ALPHABET.length; i++) table[BASE62_ALPHABET.charCodeAt(i)] = i
  return table
})()

/** The running CRC-32 after the prefix, the same for every key. */
const PREFIX_CRC = [...API_KEY_PREFIX].reduce((crc, ch) => crc32Step(crc, ch.charCodeAt(0)), CRC32_START)

export interface GeneratedApiKey {
  /** The secret: shown to its owner, never stored or published in clear text. */
  key: string
  /** Public identifier of the key (logs, events, dashboards); unrelated to the key's bits. */
  keyId: string
  /** hex SHA-256 of `key`, what the gateway looks keys up by. */
  keyHash: string
}

/**
 * A new random API key with its public id and its hash.
 *
 * @example
 * const { key, keyId, keyHash } = generateApiKey()
 * isWellFormedApiKey(key) // true
 */
export function generateApiKey(): GeneratedApiKey {
  const key = withChecksum(API_KEY_PREFIX + randomPart())
  return { key, keyId: KEY_ID_PREFIX + randomBase62(KEY_ID_RANDOM_LENGTH), keyHash: hashApiKey(key) }
}

/**
 * Whether `s` has the shape of an API key: prefix, length, alphabet and checksum. A false
 * answer needs no lookup (and no hashing): a typo or a key of another service is refused here.
 */
export function isWellFormedApiKey(s: string): boolean {
  if (typeof s !== 'string' || s.length !== API_KEY_LENGTH || !s.startsWith(API_KEY_PREFIX)) return false
  // One pass over the characters: the alphabet checked, the CRC of the body computed and the
  // checksum read as a number (62^6 < 2^53). This runs on every request; a regular expression, a
  // slice and a BigInt base62 encoding of the CRC took 1.0-1.4 us a key (0.2 us now), 3.6% of a
  // distinct call's CPU (bench/README.md, session 8).
  let crc = PREFIX_CRC
  let checksum = 0
  for (let i = API_KEY_PREFIX.length; i < API_KEY_LENGTH; i++) {
    const code = s.charCodeAt(i)
    const digit = code < 128 ? DIGIT_VALUE[code] : -1
    if (digit < 0) return false
    if (i < BODY_LENGTH) crc = crc32Step(crc, code)
    else checksum = checksum * 62 + digit
  }
  return checksum === crc32End(crc)
}

/**
 * hex SHA-256 of the key. A plain fast hash is right here, unlike for passwords: a key holds
 * about 190 random bits, so there is nothing to guess from a leaked hash, and a slow hash
 * (bcrypt, scrypt) would cost milliseconds on every request for no gain.
 */
export function hashApiKey(key: string): string {
  // The one-shot hash, not createHash(): a Hash object is a native object with a weak handle,
  // and one per request made every scavenge of the young generation walk ~1,000 dying handles
  // (1.7 of its 2.9 ms pause at 10k requests/s: bench/README.md, "Tail latency").
  return hash('sha256', key, 'hex')
}

/** Constant-time equality of two hashes, so that timing does not tell how much matched. */
export function sameHash(a: string, b: string): boolean {
  // The length of a hash is not a secret. Every character is compared, whatever the first
  // difference, with no branch on the data (hex hashes are ASCII; no Buffers per request).
  if (a.length !== b.length) return false
  let diff = 0
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i)
  return diff === 0
}

function randomPart(): string {
  for (;;) {
    const value = BigInt('0x' + randomBytes(24).toString('hex'))
    if (value < ACCEPT_BELOW) return encodeBase62(value % KEY_SPACE, RANDOM_LENGTH)
  }
}

function withChecksum(body: string): string {
  return body + checksumOf(body)
}

function checksumOf(body: string): string {
  // 62^6 ≈ 5.7e10 > 2^32: every CRC-32 fits in 6 digits.
  return encodeBase62(BigInt(crc32(body)), CHECKSUM_LENGTH)
}
