import t from 'tap'
import { Packr } from 'msgpackr'
import { BatchDecoder } from '../../src/events/batch-decoder.js'
import { decodeEvent, encodeEvent } from '../../src/events/codec.js'
import { EventDecodeError } from '../../src/events/errors.js'
import { EventBatch } from '../../src/events/event-batch.js'
import type { TollgateEvent } from '../../src/events/types.js'
import { samples, T0 } from './samples.js'

/** Standard msgpack maps, as another producer might write them (float64 timestamps, str8 keys...). */
const plain = new Packr({ useRecords: false })

/** Decode `bytes` at an offset inside a larger buffer, as an EventBatch holds them. */
function decodeAt(decoder: BatchDecoder, bytes: Uint8Array): TollgateEvent {
  const buffer = new Uint8Array(bytes.length + 7)
  buffer.set(Uint8Array.of(0xc1, 0xc1, 0xc1), 0)
  buffer.set(bytes, 3)
  return decoder.decode(buffer, 3, 3 + bytes.length)
}

t.test('every event type decodes as decodeEvent decodes it, inside a batch', async (t) => {
  const decoder = new BatchDecoder()
  for (const event of samples) {
    const bytes = encodeEvent(event)
    const got = decodeAt(decoder, bytes)
    t.same(got, decodeEvent(bytes), event.type)
    t.same(Object.keys(got), Object.keys(decodeEvent(bytes)), `${event.type}: fields in the same order`)
  }
  const batch = new EventBatch()
  for (const [i, event] of samples.entries()) batch.push(i + 1, encodeEvent(event))
  t.same(
    [...batch].map((e) => e.event),
    samples.map((e) => decodeEvent(encodeEvent(e))),
  )
})

t.test('values of every msgpack width decode as msgpackr decodes them', async (t) => {
  const decoder = new BatchDecoder()
  const base = samples.find((e) => e.type === 'UsageRecorded')!
  const values = [
    0,
    1,
    127,
    128,
    255,
    256,
    65_535,
    65_536,
    2 ** 32 - 1,
    2 ** 32,
    T0,
    2 ** 53 - 1,
    -1,
    -32,
    -33,
    -128,
    -129,
    -32_768,
    -32_769,
    -(2 ** 31),
    -(2 ** 31) - 1,
    -T0,
    1.5,
    -0.25,
    null,
    true,
    false,
  ]
  for (const value of values) {
    const event = { ...base, bytesIn: value } as unknown as TollgateEvent
    for (const bytes of [encodeEvent(event), plain.pack(event)]) t.same(decodeAt(decoder, bytes), decodeEvent(bytes), String(value))
  }
  const long = { ...base, instance: 'i'.repeat(300), network: 'n'.repeat(70_000) }
  for (const bytes of [encodeEvent(long), plain.pack(long)]) t.same(decodeAt(decoder, bytes), long, 'str8, str16 and str32 strings')
})

t.test('what is not a flat map of ASCII strings and numbers is decoded by msgpackr, the same', async (t) => {
  const decoder = new BatchDecoder()
  const base = samples.find((e) => e.type === 'UsageRecorded')!
  const cases = [
    { ...base, instance: 'gw-é' }, // a string beyond ASCII
    { ...base, network: 'réseau-très-long-pour-ne-pas-être-interné-du-tout-jamais' },
    samples.find((e) => e.type === 'NodesSelected')!, // an array of maps
    { ...base, extra: new Uint8Array([1, 2]) }, // a binary
  ]
  for (const event of cases) {
    const bytes = plain.pack(event)
    t.same(decodeAt(decoder, bytes), decodeEvent(bytes))
  }
  const float32 = new Packr({ useRecords: false, useFloat32: 1 }).pack({ ...base, bytesIn: 1.5 })
  t.ok(float32.includes(0xca), 'a float32 in the bytes')
  t.same(decodeAt(decoder, float32), decodeEvent(float32), 'a float32')
})

t.test('what is not an event is refused as decodeEvent refuses it', async (t) => {
  const decoder = new BatchDecoder()
  const { version: _version, ...noVersion } = samples[0]!
  const bad = [
    plain.pack({ ...samples[0], type: 'Unheard' }),
    plain.pack(noVersion),
    plain.pack([1, 2]),
    Uint8Array.of(0xc1),
    plain.pack({ ...samples[0], id: '' }),
  ]
  for (const bytes of bad) {
    const message = (decode: () => unknown): string => {
      try {
        decode()
      } catch (err) {
        t.type(err, EventDecodeError)
        return (err as Error).message
      }
      return 'decoded'
    }
    const expected = message(() => decodeEvent(bytes))
    t.not(expected, 'decoded')
    t.equal(
      message(() => decodeAt(decoder, bytes)),
      expected,
      expected,
    )
  }
  const event = encodeEvent(samples[0]!)
  t.throws(() => decoder.decode(event, 0, event.length - 1), EventDecodeError, 'a map cut short')
  const longer = Uint8Array.of(...event, 0x01)
  t.throws(() => decoder.decode(longer, 0, longer.length), EventDecodeError, 'a map with a byte after it')
})

t.test('strings alike at both ends, of one length, are told apart (the table compares every byte)', async (t) => {
  const decoder = new BatchDecoder()
  const base = samples.find((e) => e.type === 'UsageRecorded')!
  const keyIds = ['key_0000a0000', 'key_0000b0000', 'key_0000a0000', 'k1', 'k2', 'key_00000000ab', 'key_00000000ab']
  const got = keyIds.map((keyId) => decodeAt(decoder, encodeEvent({ ...base, keyId } as TollgateEvent)))
  t.same(
    got.map((e) => (e.type === 'UsageRecorded' ? e.keyId : undefined)),
    keyIds,
  )
  t.same(
    got.map((e) => e.id),
    keyIds.map(() => base.id),
  )
})

t.test('a full table starts over and decodes the same', async (t) => {
  const decoder = new BatchDecoder()
  const base = samples.find((e) => e.type === 'UsageRecorded')!
  // More distinct short strings than the table holds (16,384): it forgets and goes on.
  for (let i = 0; i < 40_000; i++) {
    const event = { ...base, keyId: `key-${i}`, accountId: `acc-${i % 7}` } as TollgateEvent
    const got = decodeAt(decoder, encodeEvent(event))
    if (got.type !== 'UsageRecorded' || got.keyId !== `key-${i}` || got.accountId !== `acc-${i % 7}`) {
      t.fail(`event ${i} decoded as ${JSON.stringify(got)}`)
      return
    }
  }
  t.pass('40,000 events with distinct key ids decoded')
})

t.test('maps of many shapes (more than get a function each) decode the same, fields in order', async (t) => {
  const decoder = new BatchDecoder()
  const base = samples.find((e) => e.type === 'UsageRecorded')!
  for (let i = 0; i < 300; i++) {
    const event = { ...base, [`extra${i}`]: i, ...(i % 2 === 0 ? { first: 'a' } : {}) } as TollgateEvent
    for (let round = 0; round < 2; round++) {
      const bytes = encodeEvent(event)
      const got = decodeAt(decoder, bytes)
      if (JSON.stringify(got) !== JSON.stringify(decodeEvent(bytes))) {
        t.fail(`shape ${i}, round ${round}: ${JSON.stringify(got)}`)
        return
      }
    }
  }
  t.pass('300 shapes, each twice')
})
