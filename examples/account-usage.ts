/**
 * One account's usage, live, from Tollgate's event stream on NATS: what an analytics consumer
 * writes. It asks the server for that account's events only (one filter subject), decodes them
 * as plain msgpack, counts each UsageRecorded once by its `id` (usage is delivered at least once)
 * and prints the account's totals per key as they change, one JSON object a line.
 *
 * It uses only the NATS client and a msgpack decoder, nothing of Tollgate: a consumer in another
 * language does the same (docs/events.md).
 *
 *   node --import tsx examples/account-usage.ts --nats nats://127.0.0.1:4222 --account acc_0123456789abcdef
 *   … [--since 2025-06-01T00:00:00Z] [--stream TOLLGATE] [--prefix tollgate]
 *
 * Prints, every time a key's totals change:
 *   {"accountId":"acc_…","keyId":"key_…","requests":11,"units":119,"errors":1,"bytesIn":913,"bytesOut":1240}
 */
import { parseArgs } from 'node:util'
import { DeliverPolicy, jetstream } from '@nats-io/jetstream'
import { connect } from '@nats-io/transport-node'
import { Unpackr } from 'msgpackr'

/** The fields of UsageRecorded this consumer reads (schemas/events/UsageRecorded.schema.json has them all). */
interface UsageRecorded {
  type: 'UsageRecorded'
  id: string
  accountId: string
  keyId: string
  intervalStart: number
  requests: number
  /** Compute units (version 2 on); absent in version 1 events, whose calls count 26 units each. */
  units?: number
  errors: number
  bytesIn: number
  bytesOut: number
}

interface KeyTotals {
  accountId: string
  keyId: string
  requests: number
  units: number
  errors: number
  bytesIn: number
  bytesOut: number
}

const USAGE = 'usage: account-usage --nats URL --account ID [--since ISO-TIME] [--stream TOLLGATE] [--prefix tollgate]\n'

const { values } = parseArgs({
  options: {
    nats: { type: 'string', default: 'nats://127.0.0.1:4222' },
    account: { type: 'string' },
    since: { type: 'string' },
    stream: { type: 'string', default: 'TOLLGATE' },
    prefix: { type: 'string', default: 'tollgate' },
  },
})
if (values.account === undefined || !/^[^.*>\s]+$/.test(values.account)) {
  process.stderr.write(`--account must be one account id (no dots, spaces or wildcards), got ${JSON.stringify(values.account)}\n${USAGE}`)
  process.exit(2)
}
const since = values.since === undefined ? undefined : new Date(values.since)
if (since !== undefined && Number.isNaN(since.getTime())) {
  process.stderr.write(`--since must be an ISO time such as 2025-06-01T00:00:00Z, got ${JSON.stringify(values.since)}\n${USAGE}`)
  process.exit(2)
}

// Every event of an account has the account id as the third token of its subject, so this one
// subject makes the server send this account's events and no one else's.
const subject = `${values.prefix}.*.${values.account}.*`
const nc = await connect({ servers: values.nats })
// An ordered consumer: ephemeral, in stream order, nothing to acknowledge. From the start of the
// stream, or from a time. (A service that must survive restarts uses a durable consumer instead.)
const consumer = await jetstream(nc).consumers.get(values.stream, {
  filter_subjects: subject,
  ...(since === undefined ? {} : { deliver_policy: DeliverPolicy.StartTime, opt_start_time: since.toISOString() }),
})
process.once('SIGINT', () => void nc.close())
process.once('SIGTERM', () => void nc.close())

// Plain msgpack maps. Times and other integers beyond 32 bits are msgpack uint64: read them as
// numbers (they are safe integers), not BigInt.
const unpackr = new Unpackr({ mapsAsObjects: true, int64AsType: 'number' })
/**
 * Ids counted so far. A gateway that could not reach NATS sends its usage again later, and a
 * re-sent event past JetStream's 10-minute duplicate window is stored a second time: the id says
 * it is the same fact. (Kept for ever here; a consumer that runs for months keeps a window, see
 * docs/events.md.)
 */
const counted = new Set<string>()
const totals = new Map<string, KeyTotals>()

for await (const m of await consumer.consume()) {
  const event = unpackr.unpack(m.data) as { type: string }
  if (event.type !== 'UsageRecorded') continue
  const usage = event as UsageRecorded
  if (counted.has(usage.id)) continue
  counted.add(usage.id)
  let key = totals.get(usage.keyId)
  if (key === undefined)
    totals.set(usage.keyId, (key = { accountId: usage.accountId, keyId: usage.keyId, requests: 0, units: 0, errors: 0, bytesIn: 0, bytesOut: 0 }))
  key.requests += usage.requests
  // As Tollgate counts them (docs/events.md): an event of version 1 counts 26 units a call.
  key.units += usage.units ?? usage.requests * 26
  key.errors += usage.errors
  key.bytesIn += usage.bytesIn
  key.bytesOut += usage.bytesOut
  process.stdout.write(JSON.stringify(key) + '\n')
}
