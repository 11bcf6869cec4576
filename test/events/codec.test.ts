import t from 'tap'
import { Type } from '@sinclair/typebox'
import { Packr } from 'msgpackr'
import { compileCheck } from '../../schemas/check.js'
import { decodeEvent, encodeEvent } from '../../src/events/codec.js'
import { EventDecodeError } from '../../src/events/errors.js'
import { makeEvent } from '../../src/events/make-event.js'
import { EVENT_TYPES, EVENT_VERSIONS, type EventInput } from '../../src/events/types.js'
import { eventSchemas } from '../../schemas/events.js'
import { inputs, samples, T0 } from './samples.js'

/** Checks a value against one of the published event schemas (with the validator the gateway uses). */
const validate = (schema: object, value: unknown) => compileCheck(Type.Unsafe(schema))(value)

for (const event of samples) {
  t.test(`${event.type} round-trips and matches its schema`, async (t) => {
    t.same(decodeEvent(encodeEvent(event)), event, 'decode(encode(e)) equals e')
    t.equal(event.version, EVENT_VERSIONS[event.type])
    t.match(event.id, new RegExp(`^${event.type}-[0-9a-f]{24}$`))

    const schema = eventSchemas[event.type] as {
      properties: Record<string, { const?: unknown }>
      required: string[]
      additionalProperties: boolean
    }
    t.same([...schema.required].sort(), Object.keys(event).sort(), 'the schema requires exactly the fields the event has')
    t.same(Object.keys(schema.properties).sort(), Object.keys(event).sort(), 'and describes no other')
    t.equal(schema.additionalProperties, false)
    t.equal(schema.properties.type.const, event.type)
    t.equal(schema.properties.version.const, event.version)
    t.same(validate(schema, event), { ok: true, value: event }, 'the schema accepts the sample')
    const result = validate(schema, { ...event, extra: 1 })
    t.equal(result.ok, false, 'the schema refuses an unknown field')
  })
}

t.test('plain msgpack maps: a decoder without msgpackr records reads events', async (t) => {
  const bytes = encodeEvent(samples[0])
  const isMap = (bytes[0] & 0xf0) === 0x80 || bytes[0] === 0xde || bytes[0] === 0xdf
  t.ok(isMap, `a standard msgpack map (fixmap, map16, map32), not a record extension: 0x${bytes[0].toString(16)}`)
  t.same(new Packr({ useRecords: false }).unpack(bytes), samples[0])
})

t.test('decode refuses what is not an event', async (t) => {
  const packr = new Packr({ useRecords: false })
  const { version: _version, ...noVersion } = samples[0]
  t.throws(() => decodeEvent(packr.pack({ ...samples[0], type: 'Unheard' })), EventDecodeError, 'unknown type')
  t.throws(() => decodeEvent(packr.pack(noVersion)), EventDecodeError, 'missing version')
  t.throws(() => decodeEvent(packr.pack([1, 2])), EventDecodeError, 'not a map')
  t.throws(() => decodeEvent(Uint8Array.of(0xc1)), EventDecodeError, 'not msgpack')
  t.throws(() => decodeEvent(packr.pack({ ...samples[0], type: 'Unheard' })), { name: 'EventDecodeError', message: /Unheard/ })
})

t.test('ids are deterministic: the same fact gives the same id, another fact another id', async (t) => {
  const again = EVENT_TYPES.map((type) => makeEvent(inputs[type] as EventInput, T0 + 1))
  t.same(
    again.map((e) => e.id),
    samples.map((e) => e.id),
  )
  t.equal(new Set(samples.map((e) => e.id)).size, samples.length, 'distinct across types')
  const usage = inputs.UsageRecorded
  t.equal(makeEvent({ ...usage, requests: 99 }, T0 + 50).id, makeEvent(usage, T0 + 1).id, 'counts and time are not part of a usage fact')
  t.not(makeEvent({ ...usage, intervalStart: T0 + 10_000 }, T0).id, makeEvent(usage, T0).id, 'another interval is another fact')
  t.not(makeEvent({ ...usage, instance: 'gw-2' }, T0).id, makeEvent(usage, T0).id, 'another instance is another fact')
  const ended = inputs.PlanEnded
  t.not(makeEvent(ended, T0).id, makeEvent(ended, T0 + 1).id, 'PlanEnded at another time is another fact')
  const nodes = inputs.NodesSelected
  t.equal(makeEvent({ ...nodes, nodes: [...nodes.nodes].reverse() }, T0).id, makeEvent(nodes, T0).id, 'the same selection in another order is the same fact')
  // A revocation at once after one with a grace period is another fact (it used to be dropped as a duplicate).
  t.not(makeEvent(inputs.KeyRevoked, T0).id, makeEvent({ ...inputs.KeyRevoked, effectiveAt: 1 }, T0 + 9).id, 'another effectiveAt is another revocation')
  t.equal(makeEvent(inputs.KeyRevoked, T0).id, makeEvent(inputs.KeyRevoked, T0 + 9).id, 'the same revocation made again is the same fact')
})
