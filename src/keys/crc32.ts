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

/** CRC-32 of the UTF-8 bytes of `text`, as an unsigned 32-bit number. */
export function crc32(text: string): number {
  let crc = 0xffffffff
  // ASCII (every API key: it is checked on every request) is its own UTF-8: no Buffer per call.
  let ascii = true
  for (let i = 0; i < text.length && ascii; i++) ascii = text.charCodeAt(i) < 0x80
  if (ascii) {
    for (let i = 0; i < text.length; i++) crc = TABLE[(crc ^ text.charCodeAt(i)) & 0xff] ^ (crc >>> 8)
  } else {
    for (const byte of Buffer.from(text, 'utf8')) crc = TABLE[(crc ^ byte) & 0xff] ^ (crc >>> 8)
  }
  return (crc ^ 0xffffffff) >>> 0
}
