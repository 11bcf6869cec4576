import { Packr } from 'msgpackr'
import { floatsToIntegers } from './msgpack-integers.js'
import { EVENT_VERSIONS, type TollgateEvent } from './types.js'
import { EventDecodeError } from './errors.js'

/**
 * The wire and disk encoding of events: msgpack maps with plain string keys, integer fields as
 * msgpack integers.
 *
 * `useRecords: false` matters: msgpackr's default record extension (structure sharing) is a
 * msgpackr-only format that a Go, Python or Rust consumer on NATS cannot read. Plain maps are
 * standard msgpack, so any language decodes them.
 *
 * Integers beyond 32 bits are written as uint64 (see floatsToIntegers), which msgpackr would read
 * back as BigInt: `int64AsType: 'number'` keeps them plain numbers for every caller (exact: they
 * are safe integers). Events written before, with such integers as float64, decode the same.
 */
const packr = new Packr({ useRecords: false, moreTypes: false, mapsAsObjects: true, int64AsType: 'number' })

/**
 * Encode an event as msgpack, every integer as a msgpack integer.
 * @example
 * const bytes = encodeEvent(event); nc.publish(subjectOf(event), bytes)
 */
export function encodeEvent(event: TollgateEvent): Uint8Array {
  return floatsToIntegers(packr.pack(event))
}

/**
 * Decode msgpack bytes into an event, refusing what is not one: an unknown `type`, a missing
 * or non-integer `version`, a missing `id` or `time`. The payload is not checked field by field
 * (that is the JSON Schemas' job, in tests and for foreign consumers): this runs on every event
 * a follower reads, and the producers are our own code.
 * @throws EventDecodeError
 */
export function decodeEvent(bytes: Uint8Array): TollgateEvent {
  let value: unknown
  try {
    value = packr.unpack(bytes)
  } catch (cause) {
    throw new EventDecodeError('event bytes are not valid msgpack', { cause })
  }
  return checkEvent(value)
}

/**
 * The decoded value as an event, refused as decodeEvent says (see there); for decoders of their
 * own (BatchDecoder).
 * @throws EventDecodeError
 */
export function checkEvent(value: unknown): TollgateEvent {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new EventDecodeError(`event is not a map (got ${Array.isArray(value) ? 'array' : typeof value})`)
  }
  const head = value as Record<string, unknown>
  const type = head.type
  if (typeof type !== 'string' || !Object.hasOwn(EVENT_VERSIONS, type)) {
    throw new EventDecodeError(`unknown event type ${JSON.stringify(type)}`)
  }
  if (!Number.isInteger(head.version)) {
    throw new EventDecodeError(`${type} event has no integer version`)
  }
  if (typeof head.id !== 'string' || head.id === '') {
    throw new EventDecodeError(`${type} event has no id`)
  }
  if (typeof head.time !== 'number') {
    throw new EventDecodeError(`${type} event ${head.id} has no time`)
  }
  return value as TollgateEvent
}
