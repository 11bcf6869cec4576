import { join } from 'node:path'
import t from 'tap'
import { jetstream } from '@nats-io/jetstream'
import { connect } from '@nats-io/transport-node'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { freePort } from '../../harness/free-port.js'
import { findNatsServer, launch, startNats } from '../../harness/nats-server.js'
import { ConfigError } from '../../src/config/errors.js'
import { parseConfig } from '../../src/config/load.js'
import { decodeEvent } from '../../src/events/codec.js'
import { JetStreamLog, StreamMismatch } from '../../src/events/jetstream-log.js'
import { partitionOf, partitionStream } from '../../src/events/partitions.js'
import type { TollgateEvent, UsageRecorded } from '../../src/events/types.js'
import { replay } from '../../src/projections/replay.js'
import { StateStore } from '../../src/store/state-store.js'
import { usageTotals } from '../../src/usage/usage-queries.js'
import { waitFor } from '../helpers/eventually.js'
import { accountWithKey, rateLimitedEvent, T0, tempDir, usageEvent } from '../projections/fixtures.js'

// Usage by partition (events.partitions) on a real nats-server: the same events appended to a
// log of one stream and to one of four usage partitions replay to the same state.
t.setTimeout(120_000)
const nats = await startNats()
t.teardown(() => nats.stop())

const HOUR_MS = 3_600_000
const ACCOUNTS = 24
/** Intervals six hours apart over 40 days: past the 8 days of account hours and near the 35 days of key hours. */
const INTERVALS = 160

/** Accounts with a key each, their usage from two instances in interval order, and rate limits: what a fleet appends. */
function history(): { events: TollgateEvent[]; usage: UsageRecorded[]; accounts: string[] } {
  const events: TollgateEvent[] = []
  const usage: UsageRecorded[] = []
  const keys: string[] = []
  const accounts: string[] = []
  for (let n = 0; n < ACCOUNTS; n++) {
    const accountId = `acc-${n}`
    const { events: made, key } = accountWithKey(accountId, `0x${String(n % 10).repeat(40)}`, T0 + n)
    events.push(...made)
    accounts.push(accountId)
    keys.push(key.keyId)
  }
  for (let i = 0; i < INTERVALS; i++) {
    for (let n = 0; n < ACCOUNTS; n++) {
      const e = usageEvent({
        accountId: accounts[n]!,
        keyId: keys[n]!,
        instance: i % 2 === 0 ? 'gw-a' : 'gw-b',
        intervalStart: T0 + i * 6 * HOUR_MS,
        requests: 1 + ((i * 7 + n) % 13),
        errors: (i + n) % 3,
        bytesOut: 100 * n + i,
        units: 26 * (1 + ((i * 7 + n) % 13)),
      })
      usage.push(e)
      events.push(e)
    }
    if (i % 20 === 0) events.push(rateLimitedEvent(accounts[i % ACCOUNTS]!, keys[i % ACCOUNTS]!, T0 + i * 6 * HOUR_MS, 3))
  }
  return { events, usage, accounts }
}

let streams = 0
function names(): { stream: string; subjectPrefix: string } {
  streams += 1
  return { stream: `UP${streams}`, subjectPrefix: `up${streams}` }
}

async function appended(partitions: number, events: readonly TollgateEvent[], at = names()): Promise<JetStreamLog> {
  const log = await JetStreamLog.connect({ servers: nats.url, replicas: 1, partitions, ...at })
  for (let i = 0; i < events.length; i += 500) await log.append(events.slice(i, i + 500))
  return log
}

const { events, usage, accounts } = history()
const one = await appended(1, events)
const four = await appended(4, events)
t.teardown(async () => {
  await one.close()
  await four.close()
})

t.test('P = 4 and P = 1 fed the same usage replay to the same digest and the same totals per account', async (t) => {
  t.equal(four.partitions.length, 4)
  const held = await Promise.all(four.partitions.map((p) => p.lastSeq()))
  t.ok(
    held.every((n) => n > 0),
    `every partition holds usage: ${held.join(', ')}`,
  )
  t.equal(
    held.reduce((a, b) => a + b, 0),
    usage.length,
    'the partitions hold the usage',
  )
  t.equal(await four.lastSeq(), events.length - usage.length, 'the main stream holds the rest: accounts, keys, rate limits')
  t.equal(await one.lastSeq(), events.length)

  const dir = tempDir(t, 'usage-partitions')
  const results = []
  const totals = []
  // Small transactions: the replay of four goes back and forth between the partitions many times.
  for (const [name, log] of [
    ['one', one],
    ['four', four],
  ] as const) {
    const store = StateStore.open(join(dir, name))
    results.push(await replay(store, log, { batch: 97 }))
    totals.push(accounts.map((accountId) => usageTotals(store, { accountId })))
    await store.close()
  }
  t.same(results[1], results[0], 'the same events applied, the same digest')
  t.equal(results[0]!.events, events.length)
  t.same(totals[1], totals[0], 'the same totals per account')
  const requests = (accountId: string) => usage.filter((e) => e.accountId === accountId).reduce((n, e) => n + e.requests, 0)
  t.same(
    totals[1]!.map((row) => row.requests),
    accounts.map(requests),
    'each the sum of its usage events',
  )
})

t.test('a consumer of one partition sees only its accounts, in the order they were appended', async (t) => {
  const nc = await connect({ servers: nats.url })
  t.teardown(() => nc.close())
  const { stream, subjectPrefix } = { stream: `UP2`, subjectPrefix: `up2` }
  const p = 2
  const expected = accounts.filter((a) => partitionOf(a, 4) === p)
  t.ok(expected.length > 0 && expected.length < accounts.length, `partition ${p} has ${expected.length} of the ${accounts.length} accounts`)
  const consumer = await jetstream(nc).consumers.get(partitionStream(stream, p))
  const seen: UsageRecorded[] = []
  const subjects = new Set<string>()
  const wanted = usage.filter((e) => partitionOf(e.accountId, 4) === p).length
  const messages = await consumer.fetch({ max_messages: wanted, expires: 5_000 })
  for await (const m of messages) {
    const event = decodeEvent(m.data) as UsageRecorded
    if (m.subject !== `${subjectPrefix}-usage.${p}.${event.accountId}.UsageRecorded`) subjects.add(m.subject)
    seen.push(event)
    if (seen.length >= wanted) break
  }
  t.equal(seen.length, wanted)
  t.same([...subjects], [], `every subject is ${subjectPrefix}-usage.${p}.<accountId>.UsageRecorded`)
  t.same([...new Set(seen.map((e) => e.accountId))].sort(), expected.sort(), 'its accounts, and only them')
  for (const accountId of expected) {
    const own = (list: UsageRecorded[]) => list.filter((e) => e.accountId === accountId).map((e) => e.id)
    t.same(own(seen), own(usage), `${accountId}: its usage in the order it was appended`)
  }
})

t.test('changing events.partitions on an existing stream is refused, saying what to do', async (t) => {
  const at = { stream: 'UP2', subjectPrefix: 'up2' }
  for (const partitions of [2, 1, 8]) {
    await t.rejects(
      JetStreamLog.connect({ servers: nats.url, replicas: 1, partitions, ...at }),
      {
        name: 'StreamMismatch',
        message: /written with events\.partitions 4, and this configuration says events\.partitions \d: .*Set events\.partitions back to 4/,
      },
      `${partitions} instead of 4`,
    )
  }
  // A stream whose usage is in it (P = 1) is not split by a gateway started with P = 4.
  await t.rejects(JetStreamLog.connect({ servers: nats.url, replicas: 1, partitions: 4, stream: 'UP1', subjectPrefix: 'up1' }), StreamMismatch)
  await t.rejects(JetStreamLog.connect({ servers: nats.url, replicas: 1, partitions: 4, stream: 'UP1', subjectPrefix: 'up1' }), {
    message: /written with events\.partitions 1.*Set events\.partitions back to 1/,
  })
  const again = await JetStreamLog.connect({ servers: nats.url, replicas: 1, partitions: 4, ...at })
  t.equal(again.partitions.length, 4, 'the same P opens it')
  await again.close()
})

t.test('events.partitions above 1 without NATS is refused when the configuration is read', async (t) => {
  t.throws(() => parseConfig({ events: { partitions: 4 }, networks: {} }, 'test'), ConfigError)
  t.throws(() => parseConfig({ events: { partitions: 4 }, networks: {} }, 'test'), {
    message:
      /\/events\/partitions is 4, but usage partitions are JetStream streams and events\.nats is not set.*set events\.nats, or remove events\.partitions/,
  })
  t.equal(parseConfig({ events: { nats: nats.url, partitions: 4 }, networks: {} }, 'test').events.partitions, 4)
  t.equal(parseConfig({ events: {}, networks: {} }, 'test').events.partitions, 1, 'default 1')
})

t.test("an account's partition is the one nats-server's partition() subject mapping gives it", async (t) => {
  // A server whose account maps m.<token> to p.<partition(4, token)>.<token>: what an operator's
  // mapping would compute, against partitionOf.
  const dir = await mkdtemp(join(tmpdir(), 'tollgate-nats-mapping-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const conf = join(dir, 'mapping.conf')
  await writeFile(conf, 'mappings = {\n  "m.*": "p.{{partition(4,1)}}.{{wildcard(1)}}"\n}\n')
  const port = await freePort()
  const server = await launch(findNatsServer(), port, join(dir, 'store'), ['-c', conf])
  t.teardown(async () => {
    const exited = new Promise<void>((resolve) => server.once('exit', () => resolve()))
    server.kill('SIGTERM')
    await exited
  })
  const nc = await connect({ servers: `nats://127.0.0.1:${port}` })
  t.teardown(() => nc.close())
  const ids = [...accounts, ...Array.from({ length: 100 }, (_, i) => `acc_${((i * 2654435761) % 2 ** 32).toString(16)}`)]
  const mapped = new Map<string, number>()
  const sub = nc.subscribe('p.>', {
    callback: (_err, m) => {
      const [, p, id] = m.subject.split('.')
      mapped.set(id!, Number(p))
    },
  })
  for (const id of ids) nc.publish(`m.${id}`)
  await waitFor(() => mapped.size === ids.length, 'every mapped subject')
  sub.unsubscribe()
  t.same(
    ids.filter((id) => mapped.get(id) !== partitionOf(id, 4)),
    [],
    `${ids.length} accounts: the same partition`,
  )
})
