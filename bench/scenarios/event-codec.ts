/**
 * The event codec alone: ns per event to encode and to decode a UsageRecorded (the event the
 * outbox sends most), compared with msgpackr packing the same event as it did before integer
 * fields were made msgpack integers (numbers beyond 32 bits as float64), in the same run.
 * Rounds alternate the two so that a drift of the machine hits both alike; medians are printed.
 *
 * Run on its own: `node --import tsx bench/scenarios/event-codec.ts [rounds] [eventsPerRound]`;
 * prints one JSON line.
 */
import { Packr } from 'msgpackr'
import { decodeEvent, encodeEvent } from '../../src/events/codec.js'
import { makeEvent } from '../../src/events/make-event.js'
import type { UsageRecorded } from '../../src/events/types.js'

const rounds = Number(process.argv[2] ?? 15)
const perRound = Number(process.argv[3] ?? 200_000)

/** The baseline: the codec's Packr options before the change, packing numbers as they come. */
const floatPackr = new Packr({ useRecords: false, moreTypes: false, mapsAsObjects: true })

const events: UsageRecorded[] = Array.from({ length: 1000 }, (_, i) =>
  makeEvent<UsageRecorded>(
    {
      type: 'UsageRecorded',
      accountId: `acc_${i % 50}`,
      keyId: `key_${i % 97}`,
      network: 'eth-1',
      kind: 'full',
      instance: 'bench',
      intervalStart: 1_795_531_220_000 + i * 1000,
      intervalMs: 1000,
      requests: 1234 + i,
      errors: i % 7,
      bytesIn: 80_000 + i,
      bytesOut: 120_000 + i,
    },
    1_795_531_221_000 + i * 1000,
  ),
)
const encoded = events.map((e) => encodeEvent(e))
const floatEncoded = events.map((e) => floatPackr.pack(e))

/** ns per call of `fn` over `perRound` calls. */
function time(fn: (i: number) => unknown): number {
  let sink = 0
  const t0 = process.hrtime.bigint()
  for (let i = 0; i < perRound; i++) sink += fn(i % 1000) === undefined ? 1 : 0
  const ns = Number(process.hrtime.bigint() - t0) / perRound
  if (sink < 0) process.stdout.write('')
  return ns
}

const cases = {
  encode: (i: number) => encodeEvent(events[i]!),
  encodeFloat: (i: number) => floatPackr.pack(events[i]!),
  decode: (i: number) => decodeEvent(encoded[i]!),
  decodeFloat: (i: number) => decodeEvent(floatEncoded[i]!),
}
const samples: Record<keyof typeof cases, number[]> = { encode: [], encodeFloat: [], decode: [], decodeFloat: [] }
for (const name of Object.keys(cases) as (keyof typeof cases)[]) time(cases[name]) // warm up (JIT)
for (let r = 0; r < rounds; r++) {
  const order = Object.keys(cases) as (keyof typeof cases)[]
  for (const name of r % 2 ? order.reverse() : order) samples[name].push(time(cases[name]))
}
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const m = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, Math.round(median(v))])) as Record<keyof typeof cases, number>
process.stdout.write(
  JSON.stringify({
    rounds,
    perRound,
    encodeNs: m.encode,
    encodeFloatBaselineNs: m.encodeFloat,
    encodeRatio: Number((m.encode / m.encodeFloat).toFixed(2)),
    decodeNs: m.decode,
    decodeFloatStreamNs: m.decodeFloat,
    bytes: encoded[0]!.length,
    floatBytes: floatEncoded[0]!.length,
  }) + '\n',
)
