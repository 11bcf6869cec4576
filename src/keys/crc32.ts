/**
 * CRC-32 (IEEE 802.3, the zlib polynomial). zlib.crc32 only exists from Node 20.15, and
 * package.json accepts any Node 20.
 */
const TABLE = (() => {
  const table = new Uint32Array(256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
    table[n] = c >>> 0
  }
  return table
})()

/**
 * CRC-32 of the UTF-8 bytes of `text`, as an unsigned 32-bit number.
 * @example crc32('123456789') // 0xcbf43926
 */
export function crc32(text: string): number {
  let crc = CRC32_START
  // ASCII (every API key) is its own UTF-8: no Buffer per call.
  let ascii = true
  for (let i = 0; i < text.length && ascii; i++) ascii = text.charCodeAt(i) < 0x80
  if (ascii) {
    for (let i = 0; i < text.length; i++) crc = crc32Step(crc, text.charCodeAt(i))
  } else {
    for (const byte of Buffer.from(text, 'utf8')) crc = crc32Step(crc, byte)
  }
  return crc32End(crc)
}

/**
 * The running CRC-32, a byte at a time, for a caller that reads the bytes anyway: the API key check
 * on every request computes the checksum in the same pass that checks the alphabet.
 * @example crc32End([...'abc'].reduce((crc, ch) => crc32Step(crc, ch.charCodeAt(0)), CRC32_START)) === crc32('abc')
 */
export const CRC32_START = 0xffffffff

/** The CRC after one more byte (0-255). */
export function crc32Step(crc: number, byte: number): number {
  return TABLE[(crc ^ byte) & 0xff] ^ (crc >>> 8)
}

/** The checksum of the bytes stepped so far. */
export function crc32End(crc: number): number {
  return (crc ^ 0xffffffff) >>> 0
}
