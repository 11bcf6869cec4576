import { checkEvent, decodeEvent } from './codec.js'
import type { TollgateEvent } from './types.js'

/** Strings up to this many bytes are interned (keys, types, instances, key and account ids, networks); longer ones are made afresh. */
const INTERNED_MAX_BYTES = 48
/** Slots of the interning table (a power of two), and how many strings it holds before it starts over. */
const SLOTS = 1 << 15
const INTERNED_MAX = SLOTS >> 1
/** Room for the interned strings' bytes (each compared byte by byte on a hit). */
const ARENA_BYTES = INTERNED_MAX * INTERNED_MAX_BYTES

/** Maps with more fields than this are left to decodeEvent (events have about sixteen). */
const MAX_FIELDS = 64
/** Shapes (key sequences) given a function of their own; beyond, objects are built field by field. */
const MAX_SHAPES = 256

/** A key sequence, and the function that makes an object of it from the values in order. */
interface Shape {
  keys: string[]
  /** Each key as msgpack encodes it (its head, then its bytes), to compare a map's keys with. */
  keyBytes: Uint8Array[]
  make: (values: unknown[]) => Record<string, unknown>
}

/**
 * Decodes the events of a batch (EventBatch) as decodeEvent does, with the same result and the
 * same errors, faster for the events a stream is made of: one flat msgpack map of ASCII strings
 * and numbers. Anything else (a nested map or array, a non-ASCII string, a float32, a binary) is
 * handed to decodeEvent whole.
 *
 * Why: in a replay of 1,000,000 events, msgpackr's decoding was a quarter of the projecting
 * thread's time, and every event brought a fresh string for each of its fields, which the usage
 * projection then hashed again as map keys (producers, sums per key). Here the short strings are
 * interned: a key id, an account, an instance, a network is one string for the whole replay, its
 * hash computed once, and equal strings are the same string. The event id is never interned
 * (each is new). The table is bounded (INTERNED_MAX strings, then it starts over): interning is
 * only a cache, and forgetting changes no result.
 *
 * One per thread: it keeps its table from one batch to the next.
 * @example
 * const decoder = new BatchDecoder()
 * const event = decoder.decode(bytes, start, end)
 */
export class BatchDecoder {
  /** Each slot's string (undefined: empty), where its bytes start in #arena, and their length. */
  readonly #strings: Array<string | undefined> = new Array(SLOTS).fill(undefined)
  readonly #offsets = new Uint32Array(SLOTS)
  readonly #lengths = new Uint8Array(SLOTS)
  readonly #arena = new Uint8Array(ARENA_BYTES)
  #arenaUsed = 0
  #count = 0
  /** The keys and values of the map being read (reused from one event to the next). */
  readonly #keys: string[] = []
  readonly #values: unknown[] = []
  /** Shapes seen, by a signature of their keys (see #shaped). */
  readonly #shapes = new Map<number, Shape[]>()
  /** The shape of the last map of each size (see #flatMap). */
  readonly #lastShapes: Array<Shape | undefined> = new Array(MAX_FIELDS + 1).fill(undefined)
  #shapeCount = 0
  #buffer: Latin1Buffer = Buffer.alloc(0) as Latin1Buffer
  #bytes: Uint8Array = this.#buffer
  #pos = 0

  /**
   * The event encoded in bytes[start, end).
   * @throws EventDecodeError as decodeEvent
   */
  decode(bytes: Uint8Array, start: number, end: number): TollgateEvent {
    if (bytes !== this.#bytes) {
      this.#bytes = bytes
      this.#buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) as Latin1Buffer
    }
    let event: Record<string, unknown> | undefined
    try {
      event = this.#flatMap(start, end)
    } catch {
      event = undefined // read past the buffer's end: not one complete map
    }
    return event === undefined ? decodeEvent(bytes.subarray(start, end)) : checkEvent(event)
  }

  /** The flat map at `start` that ends at `end`; undefined when it is anything else (decodeEvent then decodes it). */
  #flatMap(start: number, end: number): Record<string, unknown> | undefined {
    const b = this.#bytes
    let pos = start
    const head = b[pos++]!
    let size: number
    if (head >= 0x80 && head <= 0x8f) size = head & 0x0f
    else if (head === 0xde) {
      size = (b[pos]! << 8) | b[pos + 1]!
      pos += 2
    } else return undefined
    if (size > MAX_FIELDS) return undefined
    const keys = this.#keys
    const values = this.#values
    // The shape of the last map of this size, whose keys this one most likely has in the same
    // order: each key is then only compared with its bytes (no hash, no lookup).
    let predicted = this.#lastShapes[size]
    for (let i = 0; i < size; i++) {
      if (pos >= end) return undefined
      if (predicted !== undefined) {
        const expected = predicted.keyBytes[i]!
        const length = expected.length
        let same = pos + length <= end
        for (let j = 0; same && j < length; j++) same = b[pos + j] === expected[j]
        if (same) {
          keys[i] = predicted.keys[i]!
          pos += length
        } else predicted = undefined
      }
      if (predicted === undefined) {
        this.#pos = pos
        const key = this.#string(end, true)
        // __proto__ would set the prototype: decodeEvent (msgpackr) knows what to make of it.
        if (key === undefined || key === '__proto__') return undefined
        keys[i] = key
        pos = this.#pos
      }
      if (pos >= end) return undefined
      const h = b[pos++]!
      let value: unknown
      if (h <= 0x7f) value = h
      else if (h >= 0xe0) value = h - 0x100
      else if (h >= 0xa0 && h <= 0xbf) {
        this.#pos = pos - 1
        value = this.#string(end, keys[i] !== 'id')
        if (value === undefined) return undefined
        pos = this.#pos
      } else {
        switch (h) {
          case 0xc0:
            value = null
            break
          case 0xc2:
            value = false
            break
          case 0xc3:
            value = true
            break
          case 0xcc:
            value = b[pos]!
            pos += 1
            break
          case 0xcd:
            value = (b[pos]! << 8) | b[pos + 1]!
            pos += 2
            break
          case 0xce:
            value = this.#buffer.readUInt32BE(pos)
            pos += 4
            break
          case 0xcf:
            if (pos + 8 > end) return undefined
            // As msgpackr with int64AsType 'number': exact up to 2^53, rounded beyond (never in an event).
            value =
              this.#buffer.readUInt32BE(pos) < 0x200000
                ? this.#buffer.readUInt32BE(pos) * 0x1_0000_0000 + this.#buffer.readUInt32BE(pos + 4)
                : Number(this.#buffer.readBigUInt64BE(pos))
            pos += 8
            break
          case 0xd0:
            value = this.#buffer.readInt8(pos)
            pos += 1
            break
          case 0xd1:
            value = this.#buffer.readInt16BE(pos)
            pos += 2
            break
          case 0xd2:
            value = this.#buffer.readInt32BE(pos)
            pos += 4
            break
          case 0xd3:
            if (pos + 8 > end) return undefined
            value = Number(this.#buffer.readBigInt64BE(pos))
            pos += 8
            break
          case 0xcb:
            if (pos + 8 > end) return undefined
            value = this.#buffer.readDoubleBE(pos)
            pos += 8
            break
          case 0xd9:
          case 0xda:
          case 0xdb:
            this.#pos = pos - 1
            value = this.#string(end, keys[i] !== 'id')
            if (value === undefined) return undefined
            pos = this.#pos
            break
          default:
            return undefined
        }
      }
      if (pos > end) return undefined
      values[i] = value
    }
    if (pos !== end) return undefined
    if (predicted !== undefined) return predicted.make(values)
    const shape = this.#shaped(size)
    if (shape === undefined) return this.#object(size)
    this.#lastShapes[size] = shape
    return shape.make(values)
  }

  /**
   * The shape of #keys (undefined: MAX_SHAPES are made already). Its function makes the event as
   * an object literal, which V8 lays out with every field in the object, instead of an empty
   * object given one field after the other (a megamorphic store each, and fields beyond the
   * fourth in a separate array, slower to read in the projections). Shapes are found by a
   * signature of their keys' hashes and checked key by key.
   */
  #shaped(size: number): Shape | undefined {
    const keys = this.#keys
    let signature = size
    for (let i = 0; i < size; i++) signature = Math.imul(signature ^ hashOf(keys[i]!), 0x01000193)
    const candidates = this.#shapes.get(signature)
    if (candidates !== undefined) {
      for (const shape of candidates) {
        if (shape.keys.length !== size) continue
        let same = true
        for (let i = 0; i < size; i++) {
          if (shape.keys[i] !== keys[i]) {
            same = false
            break
          }
        }
        if (same) return shape
      }
    }
    if (this.#shapeCount === MAX_SHAPES) return undefined
    const fields = keys.slice(0, size)
    // The keys are data: JSON.stringify makes each a string literal, whatever it holds.
    const make = new Function('v', `return {${fields.map((key, i) => `${JSON.stringify(key)}: v[${i}]`).join(', ')}}`) as Shape['make']
    const shape: Shape = { keys: fields, keyBytes: fields.map((key) => Uint8Array.from(encodeKey(key))), make }
    if (candidates === undefined) this.#shapes.set(signature, [shape])
    else candidates.push(shape)
    this.#shapeCount++
    return shape
  }

  /** The object of #keys and #values made field by field (beyond MAX_SHAPES shapes). */
  #object(size: number): Record<string, unknown> {
    const out: Record<string, unknown> = {}
    for (let i = 0; i < size; i++) out[this.#keys[i]!] = this.#values[i]
    return out
  }

  /**
   * The string at #pos (fixstr, str8, str16 or str32), moving #pos past it; undefined when it is
   * not one, runs past `end` or holds a byte beyond ASCII (decodeEvent decodes those).
   */
  #string(end: number, intern: boolean): string | undefined {
    const b = this.#bytes
    let pos = this.#pos
    const head = b[pos++]!
    let length: number
    if (head >= 0xa0 && head <= 0xbf) length = head & 0x1f
    else if (head === 0xd9) length = b[pos++]!
    else if (head === 0xda) {
      length = (b[pos]! << 8) | b[pos + 1]!
      pos += 2
    } else if (head === 0xdb) {
      length = this.#buffer.readUInt32BE(pos)
      pos += 4
    } else return undefined
    const stop = pos + length
    if (stop > end) return undefined
    this.#pos = stop
    if (!intern || length > INTERNED_MAX_BYTES) {
      for (let i = pos; i < stop; i++) if (b[i]! > 0x7f) return undefined
      return this.#buffer.latin1Slice(pos, stop)
    }
    // The slot from the length and the last four bytes (where ids of one kind differ), and
    // the first four: not a hash of every byte, which cost more than the rest of the decoding.
    // A hit is checked byte by byte, and a string only interned once found ASCII.
    let hash = Math.imul(length, 0x9e3779b1)
    if (length >= 4) {
      hash = Math.imul(hash ^ ((b[stop - 1]! << 24) | (b[stop - 2]! << 16) | (b[stop - 3]! << 8) | b[stop - 4]!), 0x85ebca6b)
      hash = Math.imul(hash ^ ((b[pos]! << 24) | (b[pos + 1]! << 16) | (b[pos + 2]! << 8) | b[pos + 3]!), 0xc2b2ae35)
    } else {
      for (let i = pos; i < stop; i++) hash = Math.imul(hash ^ b[i]!, 0x01000193)
    }
    let slot = (hash ^ (hash >>> 16)) & (SLOTS - 1)
    for (;;) {
      const known = this.#strings[slot]
      if (known === undefined) break
      if (this.#lengths[slot] === length && this.#sameBytes(this.#offsets[slot]!, pos, length)) {
        return known
      }
      slot = (slot + 1) & (SLOTS - 1)
    }
    for (let i = pos; i < stop; i++) if (b[i]! > 0x7f) return undefined
    const made = this.#buffer.latin1Slice(pos, stop)
    if (this.#count === INTERNED_MAX) {
      this.#forget()
      return made
    }
    this.#strings[slot] = made
    this.#offsets[slot] = this.#arenaUsed
    this.#lengths[slot] = length
    this.#arena.set(b.subarray(pos, stop), this.#arenaUsed)
    this.#arenaUsed += length
    this.#count++
    return made
  }

  #sameBytes(at: number, pos: number, length: number): boolean {
    const a = this.#arena
    const b = this.#bytes
    for (let i = 0; i < length; i++) if (a[at + i] !== b[pos + i]) return false
    return true
  }

  /** The table is full: start over (strings interned from now on are the ones in use now). */
  #forget(): void {
    this.#strings.fill(undefined)
    this.#arenaUsed = 0
    this.#count = 0
  }
}

/** A key's hash for a shape's signature (only when a map's shape was not the one predicted). */
function hashOf(key: string): number {
  let hash = 0x811c9dc5
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193)
  return hash
}

/** A key as a msgpack string (fixstr, str8, str16 or str32) of its UTF-8 bytes. */
function encodeKey(key: string): Buffer {
  const bytes = Buffer.from(key, 'utf8')
  const n = bytes.length
  const head =
    n < 32 ? [0xa0 | n] : n < 0x100 ? [0xd9, n] : n < 0x10000 ? [0xda, n >> 8, n & 0xff] : [0xdb, n >>> 24, (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff]
  return Buffer.concat([Buffer.from(head), bytes])
}

/** Node's Buffer with the method behind toString('latin1'), without its argument checks (it is not in @types/node). */
type Latin1Buffer = Buffer & { latin1Slice(start: number, end: number): string }
