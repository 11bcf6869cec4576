import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { unpack } from 'msgpackr'
import { connect } from '@nats-io/transport-node'
import { jetstream } from '@nats-io/jetstream'
import { EmbeddedLog } from '../../src/events/embedded-log.js'
import { JetStreamLog } from '../../src/events/jetstream-log.js'
import { decodeEvent } from '../../src/events/codec.js'
import { categoryOf } from '../../src/events/types.js'
import { replay } from '../../src/projections/replay.js'
import { StateStore } from '../../src/store/state-store.js'
import { startNats } from '../../harness/nats-server.js'
import { tempDir } from './fixtures.js'
import { readModelDigest } from './fixtures-v1/read-model-digest.js'

// A log written by an earlier version (every event type, its codec's bytes, its subjects) replays
// to the same read models as that version's own replay gave (scripts/make-v1-log.ts wrote both, run with the code of commit 39d65d9).

const here = new URL('./fixtures-v1/', import.meta.url)
const records = unpack(readFileSync(new URL('log-v1.msgpack', here))) as Array<[string, Uint8Array]>
const oldAccount = 'acc_1' + '0'.repeat(23)
const oldAccountEvents = records
  .map(([, bytes]) => decodeEvent(bytes))
  .filter((e) => 'accountId' in e && e.accountId === oldAccount && categoryOf(e.type) === 'accounts')
  .map((e) => e.id)
const expected = JSON.parse(readFileSync(new URL('digest.json', here), 'utf8')) as { events: number; readModel: string }

t.test('the old log in the embedded log', async (t) => {
  const dir = tempDir(t, 'old-log')
  const log = EmbeddedLog.open(join(dir, 'log'))
  t.teardown(() => log.close())
  await log.append(records.map(([, bytes]) => decodeEvent(bytes)))
  const store = StateStore.open(join(dir, 'state'))
  t.teardown(() => store.close())
  const result = await replay(store, log)
  t.equal(result.events, expected.events)
  const unitsWrong: string[] = []
  t.equal(readModelDigest(store, unitsWrong), expected.readModel, 'the read models are what the old version built, units aside')
  t.same(unitsWrong, [], 'the units of version 1 usage are its calls × 26')
  t.same(
    (await log.readAccount(oldAccount)).events.map((s) => s.event.id),
    oldAccountEvents,
    "an account's own stream holds its old events",
  )
})

t.test('the old log on JetStream, under its old subjects and bytes', async (t) => {
  const nats = await startNats()
  t.teardown(() => nats.stop())
  const stream = `OLD${randomBytes(4).toString('hex')}`
  const log = await JetStreamLog.connect({ servers: nats.url, stream, subjectPrefix: 'tollgate', replicas: 1 })
  t.teardown(() => log.close())
  const nc = await connect({ servers: nats.url })
  t.teardown(() => nc.close())
  const js = jetstream(nc)
  for (const [subject, bytes] of records) await js.publish(subject, bytes)
  const dir = tempDir(t, 'old-js')
  const store = StateStore.open(join(dir, 'state'))
  t.teardown(() => store.close())
  const result = await replay(store, log)
  t.equal(result.events, expected.events)
  const unitsWrong: string[] = []
  t.equal(readModelDigest(store, unitsWrong), expected.readModel, 'the read models are what the old version built, units aside')
  t.same(unitsWrong, [], 'the units of version 1 usage are its calls × 26')
  const account = await log.readAccount(oldAccount)
  t.same(
    account.events.map((s) => s.event.id),
    oldAccountEvents,
    "an account's stream includes its events under the old subjects",
  )
  t.equal(account.version, 0, 'no event on its own subject yet: a first command expects version 0')
})
