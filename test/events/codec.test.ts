import t from 'tap'
import { pathToFileURL } from 'node:url'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { Packr } from 'msgpackr'
import { decodeEvent, encodeEvent, EventDecodeError } from '../../src/events/codec.js'
import { makeEvent } from '../../src/events/make-event.js'
import { EVENT_TYPES, EVENT_VERSIONS, type EventInput, type EventType, type TollgateEvent } from '../../src/events/types.js'
import { eventSchemas } from '../../schemas/events.js'

const T0 = 1_700_000_000_000

/** One sample of every type: the mapped type makes a new event type without a sample a compile error. */
const inputs: { [K in EventType]: EventInput<Extract<TollgateEvent, { type: K }>> } = {
  AccountCreated: { type: 'AccountCreated', accountId: 'acc-1', wallet: '0x' + 'ab'.repeat(20) },
  PlanActivated: { type: 'PlanActivated', accountId: 'acc-1', planId: 'tier-1', startsAt: T0, endsAt: null },
  PlanEnded: { type: 'PlanEnded', accountId: 'acc-1', planId: 'tier-1', reason: 'replaced' },
  NodesSelected: { type: 'NodesSelected', accountId: 'acc-1', nodes: [{ network: 'eth-1', kind: 'archive' }, { network: 'bsc-1', kind: 'full' }] },
  KeyIssued: { type: 'KeyIssued', accountId: 'acc-1', keyId: 'k1', keyHash: 'f'.repeat(64), keyCipher: 'AbC-_9' },
  KeyRevoked: { type: 'KeyRevoked', accountId: 'acc-1', keyId: 'k1', reason: 'regenerated', effectiveAt: T0 + 5000 },
  RateLimited: {
    type: 'RateLimited', accountId: 'acc-1', keyId: 'k1', network: 'eth-1', kind: 'full', instance: 'gw-1',
    intervalStart: T0, intervalMs: 10_000, count: 7, reason: 'http-rps',
  },
  IpThrottled: {
    type: 'IpThrottled', ip: '203.0.113.7', until: T0 + 60_000, reason: 'rate-limit-rejections', rejections: 1000, windowMs: 10_000, instance: 'gw-1',
  },
  UsageRecorded: {
    type: 'UsageRecorded', accountId: 'acc-1', keyId: 'k1', network: 'eth-1', kind: 'archive', instance: 'gw-1',
    intervalStart: T0, intervalMs: 10_000, requests: 12, errors: 1, bytesIn: 300, bytesOut: 4_000_000_000,
  },
  WsLimited: {
    type: 'WsLimited', accountId: 'acc-1', keyId: 'k1', network: 'eth-1', instance: 'gw-1',
    intervalStart: T0, intervalMs: 1000, reason: 'ws-messages-throttled', count: 40,
  },
  WsCooldownStarted: {
    type: 'WsCooldownStarted', accountId: 'acc-1', keyId: 'k1', network: 'eth-1', instance: 'gw-1',
    reason: 'ws-connection-rate', until: T0 + 60_000, connections: 16, windowMs: 1000,
  },
  WsPenaltyImposed: {
    type: 'WsPenaltyImposed', accountId: 'acc-1', keyId: 'k1', network: 'eth-1', instance: 'gw-1',
    reason: 'ws-bad-messages', until: T0 + 300_000, badMessages: 21, windowMs: 60_000,
  },
  NotificationsRecorded: {
    type: 'NotificationsRecorded', accountId: 'acc-1', keyId: 'k1', network: 'eth-1', kind: 'full', instance: 'gw-1',
    intervalStart: T0, intervalMs: 1000, notifications: 3, bytesOut: 2400,
  },
  SignedIn: { type: 'SignedIn', accountId: 'acc-1', wallet: '0x' + 'ab'.repeat(20), nonce: 'a1b2c3d4e5f6', sessionHash: 'e'.repeat(64), expiresAt: T0 + 86_400_000 },
  SignedOut: { type: 'SignedOut', accountId: 'acc-1', sessionHash: 'e'.repeat(64) },
  FreePlanClaimed: { type: 'FreePlanClaimed', accountId: 'acc-1', planId: 'free-trial', attempt: 'r4nd0m' },
  InvoiceCreated: {
    type: 'InvoiceCreated', accountId: 'acc-1', invoiceId: 'inv_1', planId: 'tier-1', nodes: [{ network: 'eth-1', kind: 'full' }],
    network: 'eth-1', token: '0x' + 'cd'.repeat(20), treasury: '0x' + 'ef'.repeat(20), amount: '50000000000000000000', decimals: 18, priceUsd: 50,
  },
  PaymentConfirmed: {
    type: 'PaymentConfirmed', accountId: 'acc-1', invoiceId: 'inv_1', network: 'eth-1', txHash: '0x' + '12'.repeat(32), logIndex: 0,
    from: '0x' + 'ab'.repeat(20), amount: '50000000000000000000', blockNumber: 12, blockHash: '0x' + '34'.repeat(32), attempt: 'r4nd0m',
  },
  PrivateNodeRequested: { type: 'PrivateNodeRequested', accountId: 'acc-1', nodes: [{ network: 'eth-1', kind: 'archive' }] },
  DomainsRestricted: { type: 'DomainsRestricted', accountId: 'acc-1', keyId: 'k1', domains: ['example.com', '*.example.org'] },
  DedicatedNodeAttached: { type: 'DedicatedNodeAttached', accountId: 'acc-1', network: 'eth-1', kind: 'full', url: 'http://10.0.0.5:8545', ws: null },
}
const samples = EVENT_TYPES.map((type) => makeEvent(inputs[type] as EventInput, T0 + 1))

/** schemas/validate.ts is written by another part; use it once it is there. */
type Validate = (schema: object, value: unknown) => { ok: true } | { ok: false; errors: { path: string; message: string }[] }
const validatePath = join(import.meta.dirname, '..', '..', 'schemas', 'validate.ts')
const validate: Validate | undefined = existsSync(validatePath)
  ? ((await import(pathToFileURL(validatePath).href)) as { validate: Validate }).validate
  : undefined

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
    if (validate) {
      t.same(validate(schema, event), { ok: true }, 'the schema accepts the sample')
      const result = validate(schema, { ...event, extra: 1 })
      t.equal(result.ok, false, 'the schema refuses an unknown field')
    }
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
  t.same(again.map((e) => e.id), samples.map((e) => e.id))
  t.equal(new Set(samples.map((e) => e.id)).size, samples.length, 'distinct across types')
  const usage = inputs.UsageRecorded
  t.equal(makeEvent({ ...usage, requests: 99 }, T0 + 50).id, makeEvent(usage, T0 + 1).id, 'counts and time are not part of a usage fact')
  t.not(makeEvent({ ...usage, intervalStart: T0 + 10_000 }, T0).id, makeEvent(usage, T0).id, 'another interval is another fact')
  t.not(makeEvent({ ...usage, instance: 'gw-2' }, T0).id, makeEvent(usage, T0).id, 'another instance is another fact')
  const ended = inputs.PlanEnded
  t.not(makeEvent(ended, T0).id, makeEvent(ended, T0 + 1).id, 'PlanEnded at another time is another fact')
  const nodes = inputs.NodesSelected
  t.equal(
    makeEvent({ ...nodes, nodes: [...nodes.nodes].reverse() }, T0).id,
    makeEvent(nodes, T0).id,
    'the same selection in another order is the same fact',
  )
  t.equal(makeEvent(inputs.KeyRevoked, T0).id, makeEvent({ ...inputs.KeyRevoked, effectiveAt: 1 }, T0 + 9).id)
})
