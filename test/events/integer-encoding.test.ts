import t, { type Test } from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Packr } from 'msgpackr'
import { decodeEvent, encodeEvent } from '../../src/events/codec.js'
import { makeEvent } from '../../src/events/make-event.js'
import { floatsToIntegers } from '../../src/events/msgpack-integers.js'
import { EVENT_TYPES, type EventInput, type EventType, type TollgateEvent } from '../../src/events/types.js'
import { eventSchemas } from '../../schemas/events.js'
import { inputs, samples, T0 } from './samples.js'

// A consumer that decodes into typed fields (Go int64, Rust u64, Java unpackLong) refuses a
// msgpack float where the schema says integer. msgpackr writes numbers beyond 32 bits as
// float64 unless told otherwise, so every millisecond timestamp was a float on the wire.

/** The msgpack family of a value as it is on the wire, which msgpackr's decoder hides. */
type Wire = 'int' | 'float' | 'str' | 'nil' | 'bool' | 'map' | 'array' | 'bin' | 'ext'

/**
 * A tiny msgpack reader, independent of msgpackr: the wire family of each top-level map value,
 * and the value itself for scalars. It reads every format of the msgpack spec.
 */
function wireFields(bytes: Uint8Array): Map<string, { wire: Wire; value: unknown }> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  let pos = 0
  const u8 = () => bytes[pos++]!
  const take = (n: number) => {
    const start = pos
    pos += n
    if (pos > bytes.length) throw new Error('truncated msgpack')
    return bytes.subarray(start, pos)
  }
  const len = (size: 1 | 2 | 4) => {
    const n = size === 1 ? view.getUint8(pos) : size === 2 ? view.getUint16(pos) : view.getUint32(pos)
    pos += size
    return n
  }
  const str = (n: number) => new TextDecoder().decode(take(n))
  /** Read one value; containers are skipped through (their elements read and dropped). */
  const read = (): { wire: Wire; value: unknown } => {
    const b = u8()
    if (b <= 0x7f) return { wire: 'int', value: b }
    if (b >= 0xe0) return { wire: 'int', value: b - 0x100 }
    if ((b & 0xf0) === 0x80) return container('map', (b & 0x0f) * 2)
    if ((b & 0xf0) === 0x90) return container('array', b & 0x0f)
    if ((b & 0xe0) === 0xa0) return { wire: 'str', value: str(b & 0x1f) }
    const at = pos
    switch (b) {
      case 0xc0:
        return { wire: 'nil', value: null }
      case 0xc2:
        return { wire: 'bool', value: false }
      case 0xc3:
        return { wire: 'bool', value: true }
      case 0xc4:
      case 0xc5:
      case 0xc6:
        return { wire: 'bin', value: take(len(b === 0xc4 ? 1 : b === 0xc5 ? 2 : 4)) }
      case 0xc7:
      case 0xc8:
      case 0xc9: {
        const n = len(b === 0xc7 ? 1 : b === 0xc8 ? 2 : 4)
        take(n + 1)
        return { wire: 'ext', value: undefined }
      }
      case 0xca:
        pos += 4
        return { wire: 'float', value: view.getFloat32(at) }
      case 0xcb:
        pos += 8
        return { wire: 'float', value: view.getFloat64(at) }
      case 0xcc:
        pos += 1
        return { wire: 'int', value: view.getUint8(at) }
      case 0xcd:
        pos += 2
        return { wire: 'int', value: view.getUint16(at) }
      case 0xce:
        pos += 4
        return { wire: 'int', value: view.getUint32(at) }
      case 0xcf:
        pos += 8
        return { wire: 'int', value: Number(view.getBigUint64(at)) }
      case 0xd0:
        pos += 1
        return { wire: 'int', value: view.getInt8(at) }
      case 0xd1:
        pos += 2
        return { wire: 'int', value: view.getInt16(at) }
      case 0xd2:
        pos += 4
        return { wire: 'int', value: view.getInt32(at) }
      case 0xd3:
        pos += 8
        return { wire: 'int', value: Number(view.getBigInt64(at)) }
      case 0xd4:
      case 0xd5:
      case 0xd6:
      case 0xd7:
      case 0xd8:
        take(1 + 2 ** (b - 0xd4))
        return { wire: 'ext', value: undefined }
      case 0xd9:
      case 0xda:
      case 0xdb:
        return { wire: 'str', value: str(len(b === 0xd9 ? 1 : b === 0xda ? 2 : 4)) }
      case 0xdc:
      case 0xdd:
        return container('array', len(b === 0xdc ? 2 : 4))
      case 0xde:
      case 0xdf:
        return container('map', len(b === 0xde ? 2 : 4) * 2)
      default:
        throw new Error(`byte 0x${b.toString(16)} at ${pos - 1} is not msgpack`)
    }
  }
  const container = (wire: 'map' | 'array', items: number) => {
    for (let i = 0; i < items; i++) read()
    return { wire, value: undefined }
  }

  const head = u8()
  const size = (head & 0xf0) === 0x80 ? head & 0x0f : head === 0xde ? len(2) : head === 0xdf ? len(4) : -1
  if (size < 0) throw new Error(`an event is a msgpack map, got first byte 0x${head.toString(16)}`)
  const fields = new Map<string, { wire: Wire; value: unknown }>()
  for (let i = 0; i < size; i++) {
    const key = read()
    if (key.wire !== 'str') throw new Error(`map key of wire type ${key.wire}`)
    fields.set(key.value as string, read())
  }
  if (pos !== bytes.length) throw new Error(`${bytes.length - pos} bytes after the event`)
  return fields
}

type PropertySchema = { type?: string | string[]; const?: unknown; maximum?: number }

/** The fields a type's JSON Schema declares `integer` (alone or with null), version included. */
function integerFields(type: EventType): string[] {
  const { properties } = eventSchemas[type] as { properties: Record<string, PropertySchema> }
  return Object.entries(properties)
    .filter(([, p]) => [p.type].flat().includes('integer') || Number.isInteger(p.const))
    .map(([name]) => name)
}

/** Fail on every field the schema calls integer that is not a msgpack integer on the wire. */
function checkIntegers(t: Test, event: TollgateEvent): void {
  const fields = wireFields(encodeEvent(event))
  for (const name of integerFields(event.type)) {
    const field = fields.get(name)
    t.ok(field, `${event.type}.${name} is in the bytes`)
    if (field === undefined || (field.wire === 'nil' && (event as unknown as Record<string, unknown>)[name] === null)) continue
    t.equal(field.wire, 'int', `${event.type}.${name} = ${String((event as unknown as Record<string, unknown>)[name])} is a msgpack integer`)
    t.equal(field.value, (event as unknown as Record<string, unknown>)[name], `${event.type}.${name} keeps its value on the wire`)
  }
}

/**
 * The sample of a type with every integer field set to a value beyond 32 bits (or to its
 * schema's maximum when it has one): a field whose sample value happens to be small must not
 * hide that large values of it would be floats.
 */
function withWideIntegers(type: EventType, i: number): TollgateEvent {
  const { properties } = eventSchemas[type] as { properties: Record<string, PropertySchema> }
  const input = { ...inputs[type] } as Record<string, unknown>
  for (const name of integerFields(type)) {
    if (!(name in input)) continue // the head (version, time) is makeEvent's
    input[name] = properties[name]!.maximum ?? 2 ** 40 + 7 * i + 1
  }
  return makeEvent(input as EventInput, T0 + 2 ** 41)
}

t.test('every field a schema declares integer is a msgpack integer, in every event type', async (t) => {
  t.equal(samples.length, EVENT_TYPES.length, 'one sample of every type')
  for (const event of samples) checkIntegers(t, event)
})

t.test('integer fields beyond 32 bits are msgpack integers and decode to the same numbers', async (t) => {
  for (const [i, type] of EVENT_TYPES.entries()) {
    const event = withWideIntegers(type, i)
    checkIntegers(t, event)
    t.same(decodeEvent(encodeEvent(event)), event, `${type} round-trips as plain numbers`)
  }
})

t.test('a field the schema calls number keeps a fraction as a float', async (t) => {
  const invoice = makeEvent({ ...inputs.InvoiceCreated, priceUsd: 49.99 }, T0)
  t.same(wireFields(encodeEvent(invoice)).get('priceUsd'), { wire: 'float', value: 49.99 })
  t.same(decodeEvent(encodeEvent(invoice)), invoice)
})

t.test('events written before integers were packed as integers (float64 timestamps) still decode', async (t) => {
  const fixture = JSON.parse(readFileSync(join(import.meta.dirname, 'fixtures', 'float-timestamps.json'), 'utf8')) as {
    events: Array<{ type: EventType; hex: string; event: TollgateEvent }>
  }
  // Types added after integers were packed as integers were never written the old way.
  const newer = new Set<EventType>(['PaymentUnmatched', 'KeyRestricted', 'KeyRuleRefused', 'JwtKeyRegistered', 'JwtKeyRemoved', 'KeyTokenRequired'])
  t.same(
    fixture.events.map((e) => e.type),
    EVENT_TYPES.filter((type) => !newer.has(type)),
    'the fixture holds one event of every type of that time',
  )
  for (const { hex, event } of fixture.events) {
    const bytes = Buffer.from(hex, 'hex')
    t.equal(wireFields(bytes).get('time')?.wire, 'float', `${event.type}: the fixture is the old encoding (time is a float64)`)
    t.same(decodeEvent(bytes), event, `${event.type} decodes to the same event`)
    t.same(wireFields(encodeEvent(decodeEvent(bytes))).get('time')?.wire, 'int', `${event.type}: encoded again, time is an integer`)
  }
})

t.test('the rewrite reads every msgpack format and changes only whole float64s', async (t) => {
  const packr = new Packr({ useRecords: false, mapsAsObjects: true, int64AsType: 'number' })
  const value = {
    wide: 2 ** 40 + 3,
    negativeWide: -(2 ** 40) - 3,
    fraction: 1.5,
    tooBig: 2 ** 60, // beyond 2^53: not an exact integer as a number, left a float
    small: [0, -1, 200, -200, 70_000, -70_000, 4_000_000_000, -2_000_000_000],
    nested: [{ at: 2 ** 33 }, [2 ** 34, 'x'.repeat(300), 'y'.repeat(70_000)]],
    bytes: Buffer.alloc(300, 1),
    date: new Date(1_700_000_000_000), // an ext (msgpack timestamp): skipped untouched
    flags: [true, false, null],
    map16: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, 2 ** 35 + i])),
  }
  const bytes = floatsToIntegers(packr.pack(value))
  const wire = wireFields(bytes)
  t.same(wire.get('wide'), { wire: 'int', value: 2 ** 40 + 3 })
  t.same(wire.get('negativeWide'), { wire: 'int', value: -(2 ** 40) - 3 })
  t.same(wire.get('fraction'), { wire: 'float', value: 1.5 })
  t.same(wire.get('tooBig'), { wire: 'float', value: 2 ** 60 })
  t.equal(bytes[bytes.indexOf(Buffer.from('wide')) + 4], 0xcf, 'non-negative: uint64')
  t.equal(bytes[bytes.indexOf(Buffer.from('negativeWide')) + 12], 0xd3, 'negative: int64')
  t.same(packr.unpack(bytes), value, 'decodes to the same value')
  t.throws(() => floatsToIntegers(packr.pack(value).subarray(0, 40)), RangeError, 'truncated bytes are refused')
})
