/**
 * Rewrites, in place, every msgpack float64 whose value is a safe integer as a uint64 (0xcf;
 * int64, 0xd3, when negative): the same 9 bytes, so nothing moves.
 *
 * Why: msgpackr packs a number that does not fit 32 bits (every ms timestamp) as float64, while
 * the event schemas say `integer`, and a typed consumer (Go int64, Rust u64, Java unpackLong)
 * refuses a float there. msgpackr has no option to pack such numbers as integers; handing it a
 * BigInt copy of every event costs twice this pass (bench/scenarios/event-codec.ts) and writes
 * int64 where other encoders write uint64. A number with a fraction stays a float64; a float
 * field that happens to hold a whole number becomes an integer, as msgpackr already does for
 * small ones, and decodes to the same number.
 *
 * Reads every msgpack format; an ext (which events never hold) is skipped over untouched.
 * @throws RangeError on bytes that are not one complete msgpack value
 */
export function floatsToIntegers(bytes: Buffer): Buffer {
  let pos = 0
  let pending = 1 // values still to read: 1, plus the items of every map or array opened
  while (pending > 0) {
    pending--
    if (pos >= bytes.length) throw new RangeError(`msgpack value ends early at byte ${pos}`)
    const head = bytes[pos++]!
    if (head <= 0x7f || head >= 0xe0) continue // positive or negative fixint
    if (head <= 0x8f)
      pending += (head & 0x0f) * 2 // fixmap
    else if (head <= 0x9f)
      pending += head & 0x0f // fixarray
    else if (head <= 0xbf)
      pos += head & 0x1f // fixstr
    else {
      switch (head) {
        case 0xc0:
        case 0xc2:
        case 0xc3:
          break // nil, false, true
        case 0xcb: {
          const value = bytes.readDoubleBE(pos)
          if (Number.isSafeInteger(value)) {
            if (value >= 0) {
              bytes[pos - 1] = 0xcf
              bytes.writeUInt32BE(Math.floor(value / 0x1_0000_0000), pos)
              bytes.writeUInt32BE(value % 0x1_0000_0000, pos + 4)
            } else {
              bytes[pos - 1] = 0xd3
              bytes.writeBigInt64BE(BigInt(value), pos)
            }
          }
          pos += 8
          break
        }
        case 0xca:
        case 0xce:
        case 0xd2:
          pos += 4
          break // float32, uint32, int32
        case 0xcc:
        case 0xd0:
          pos += 1
          break
        case 0xcd:
        case 0xd1:
          pos += 2
          break
        case 0xcf:
        case 0xd3:
          pos += 8
          break
        case 0xc4:
        case 0xd9:
          pos += 1 + bytes.readUInt8(pos)
          break // bin8, str8
        case 0xc5:
        case 0xda:
          pos += 2 + bytes.readUInt16BE(pos)
          break
        case 0xc6:
        case 0xdb:
          pos += 4 + bytes.readUInt32BE(pos)
          break
        case 0xc7:
          pos += 2 + bytes.readUInt8(pos)
          break // ext8: length, type, data
        case 0xc8:
          pos += 3 + bytes.readUInt16BE(pos)
          break
        case 0xc9:
          pos += 5 + bytes.readUInt32BE(pos)
          break
        case 0xd4:
        case 0xd5:
        case 0xd6:
        case 0xd7:
        case 0xd8:
          pos += 1 + 2 ** (head - 0xd4)
          break // fixext: type, data
        case 0xdc:
          pending += bytes.readUInt16BE(pos)
          pos += 2
          break
        case 0xdd:
          pending += bytes.readUInt32BE(pos)
          pos += 4
          break
        case 0xde:
          pending += bytes.readUInt16BE(pos) * 2
          pos += 2
          break
        case 0xdf:
          pending += bytes.readUInt32BE(pos) * 2
          pos += 4
          break
        default:
          throw new RangeError(`byte 0x${head.toString(16)} at ${pos - 1} is not msgpack`)
      }
    }
  }
  if (pos !== bytes.length) throw new RangeError(`msgpack value ends at byte ${pos} of ${bytes.length}`)
  return bytes
}
