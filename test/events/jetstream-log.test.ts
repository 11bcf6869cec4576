import t from 'tap'
import { JetStreamLog, StreamMismatch } from '../../src/events/jetstream-log.js'
import type { EventLog } from '../../src/events/log.js'
import { EventLogUnavailable } from '../../src/events/errors.js'
import { ReaderThread, readerThreadOptions } from '../../src/events/read-in-thread.js'
import type { StoredEvent } from '../../src/events/types.js'
import { connect } from '@nats-io/transport-node'
import { jetstreamManager } from '@nats-io/jetstream'
import { until, within } from '../helpers/eventually.js'
import { startNats } from '../../harness/nats-server.js'
import { runEventLogSuite, runReadAllTests, usageEvents, waitFor, type OpenedLog } from './log-suite.js'

const nats = await startNats()
t.teardown(() => nats.stop())

let streams = 0
/** A fresh stream and subject prefix per test, so that tests never see each other's events. */
function freshNames(): { stream: string; subjectPrefix: string } {
  streams += 1
  return { stream: `T${streams}`, subjectPrefix: `t${streams}` }
}

/** A fresh stream, opened as many times as asked; `readThreadFrom`: see JetStreamLogOptions. */
async function openFresh(readThreadFrom?: number): Promise<OpenedLog> {
  const names = freshNames()
  const open = () => JetStreamLog.connect({ servers: nats.url, replicas: 1, readThreadFrom, ...names })
  const opened: EventLog[] = [await open()]
  return {
    log: opened[0],
    async another() {
      const log = await open()
      opened.push(log)
      return log
    },
    async cleanup() {
      for (const log of opened) await log.close()
    },
  }
}

runEventLogSuite(t, 'jetstream', () => openFresh())
// Every readAll in a worker thread, however short: the path a replay takes.
runReadAllTests(t, 'jetstream, reading in a worker thread', () => openFresh(1))

t.test('jetstream: an existing stream with other subjects is refused by name', async (t) => {
  const names = freshNames()
  const log = await JetStreamLog.connect({ servers: nats.url, replicas: 1, ...names })
  await log.close()
  await t.rejects(JetStreamLog.connect({ servers: nats.url, replicas: 1, stream: names.stream, subjectPrefix: 'other' }), StreamMismatch)
})

t.test('jetstream: unreachable NATS at start rejects with EventLogUnavailable', async (t) => {
  const down = await startNats()
  await down.stop()
  await t.rejects(JetStreamLog.connect({ servers: down.url, replicas: 1, timeoutMs: 1000, ...freshNames() }), EventLogUnavailable)
})

for (const [how, readThreadFrom] of [
  ['', undefined],
  [' (in a worker thread)', 1],
] as const) {
  t.test(`jetstream: readAll reads the whole range with one consumer, not one per batch${how}`, async (t) => {
    const names = freshNames()
    const log = await JetStreamLog.connect({ servers: nats.url, replicas: 1, readThreadFrom, ...names })
    t.teardown(() => log.close())
    await log.append(usageEvents(6000))
    // Every JetStream API request is a message on $JS.API.>: watch them from another connection.
    const nc = await connect({ servers: nats.url })
    t.teardown(() => nc.close())
    const requests: string[] = []
    const sub = nc.subscribe('$JS.API.>', { callback: (_err, msg) => void requests.push(msg.subject) })
    await nc.flush()
    const consumersDuring = new Set<string>()
    const jsm = await jetstreamManager(nc)
    const read = await log.readAll(
      1,
      async (batch) => {
        // A listing can hold a null entry for a consumer going away while it is listed (seen on a
        // slow machine): only the named ones count.
        for await (const c of jsm.consumers.list(names.stream)) if (c !== null) consumersDuring.add(c.name)
        t.equal(batch.length, 1000)
      },
      { batch: 1000 },
    )
    t.equal(read, 6000)
    await nc.flush()
    sub.unsubscribe()
    const ours = requests.filter((s) => s.includes(`.${names.stream}`) && !s.includes('CONSUMER.LIST'))
    t.equal(ours.filter((s) => s.startsWith('$JS.API.CONSUMER.CREATE')).length, 1, 'one consumer created for six batches')
    // Once for the last seq, once by the client when it creates the consumer; never per batch.
    t.equal(ours.filter((s) => s.startsWith('$JS.API.STREAM.INFO')).length, 2, 'the stream info asked twice in all')
    t.equal(consumersDuring.size, 1, 'the same consumer read every batch')
    // The deletion is asked for as the read ends, and done by the server: wait for it (bounded).
    let left = -1
    await until(async () => (left = (await jsm.consumers.list(names.stream).next()).length) === 0)
    t.equal(left, 0, 'the consumer is deleted after the read')
  })
}

t.test('jetstream: a reader thread started before the log (as a replay does) is the one its first threaded readAll reads with', async (t) => {
  const names = freshNames()
  // Started before the stream exists: it only connects until it is told what to read.
  const early = ReaderThread.start(readerThreadOptions({ servers: nats.url, stream: names.stream, name: 'early' }))
  const log = await JetStreamLog.connect({ servers: nats.url, replicas: 1, readThreadFrom: 1, readerThread: early, ...names })
  t.teardown(() => log.close())
  await log.append(usageEvents(2500))
  t.notOk(early.used, 'not used before a read')
  const sizes: number[] = []
  const seqs: number[] = []
  t.equal(
    await log.readAll(
      1,
      (batch) => {
        sizes.push(batch.length)
        for (const { seq } of batch) seqs.push(seq)
      },
      { batch: 1000 },
    ),
    2500,
  )
  t.ok(early.used, 'the early thread did the read')
  t.same(sizes, [1000, 1000, 500])
  t.same(
    seqs,
    Array.from({ length: 2500 }, (_, i) => i + 1),
  )
  // A thread reads once: the next read starts a thread of its own.
  const again: number[] = []
  t.equal(await log.readAll(2001, (batch) => void again.push(batch.length), { batch: 1000 }), 2500)
  t.same(again, [500])
})

t.test('jetstream: NATS gone in the middle of a readAll in a worker thread: EventLogUnavailable, and nothing more', async (t) => {
  const log = await JetStreamLog.connect({ servers: nats.url, replicas: 1, readThreadFrom: 1, ...freshNames() })
  t.teardown(() => log.close())
  await log.append(usageEvents(3000))
  const delivered: number[] = []
  const error = await log
    .readAll(
      1,
      async (batch) => {
        delivered.push(batch.firstSeq!)
        if (delivered.length === 1) await nats.kill()
      },
      { batch: 1000 },
    )
    .then(
      () => undefined,
      (err: unknown) => err,
    )
  await nats.restart()
  t.type(error, EventLogUnavailable)
  t.match((error as Error).message, /cannot read stream|sent nothing|reader thread/)
  t.ok(delivered.length < 3, `not every batch was delivered (${delivered.length})`)
})

// Every instance follows the log: what following costs the server per append is paid N times.
t.test('jetstream: a follower asks the server nothing per append: the events come on one consumer', async (t) => {
  const names = freshNames()
  const log = await JetStreamLog.connect({ servers: nats.url, replicas: 1, ...names })
  const writer = await JetStreamLog.connect({ servers: nats.url, replicas: 1, ...names })
  const nc = await connect({ servers: nats.url })
  t.teardown(async () => {
    await log.close()
    await writer.close()
    await nc.close()
  })
  const jsm = await jetstreamManager(nc)
  const apiRequests = async (): Promise<number> => (await jsm.getAccountInfo()).api.total
  const got: StoredEvent[] = []
  const follower = log.follow(1, async (batch) => {
    got.push(...batch)
  })
  t.teardown(() => follower.stop())
  await writer.append(usageEvents(1))
  await waitFor(() => got.length >= 1, 'the first event')

  const before = await apiRequests()
  const APPENDS = 40
  // One at a time, each after the follower has the one before: a wake-up per append, as an
  // outbox's flushes on other instances are.
  for (let i = 1; i <= APPENDS; i++) {
    await writer.append(usageEvents(1, i))
    await waitFor(() => got.length >= i + 1, `event ${i + 1}`)
  }
  // Its own reading of the account info is one request; the follower may renew its fetch once or twice.
  const asked = (await apiRequests()) - before - 1
  t.ok(asked <= 3, `the server had ${asked} JetStream API requests for ${APPENDS} appends followed (a read per append asks at least 3 each)`)
  t.same(
    got.map((s) => s.seq),
    Array.from({ length: APPENDS + 1 }, (_, i) => i + 1),
    'every event once, in order',
  )
})

// Last: it kills and restarts the shared server.
t.test('jetstream: while NATS is down appends are refused, never left hanging; after its restart they work and followers resume', async (t) => {
  const log = await JetStreamLog.connect({ servers: nats.url, replicas: 1, timeoutMs: 2000, ...freshNames() })
  t.teardown(() => log.close())
  const got: StoredEvent[] = []
  const follower = log.follow(1, async (batch) => {
    got.push(...batch)
  })
  t.teardown(() => follower.stop())
  await log.append(usageEvents(3))
  await waitFor(() => got.length >= 3, 'the first events')

  await nats.kill()
  // Whether or not the client has noticed the closed socket yet, the append is refused (at once,
  // or when the acknowledgement time-out of 2 s runs out), never left hanging: it must settle
  // within HANG_MS, far past the time-out so that a slow machine is not taken for a hang. How long
  // it took is reported, not asserted.
  const HANG_MS = 30_000
  let outcome: { error: unknown } | undefined
  void log.append(usageEvents(1, 3)).then(
    () => (outcome = { error: undefined }),
    (error: unknown) => (outcome = { error }),
  )
  const ms = await within(HANG_MS, () => outcome !== undefined)
  t.not(ms, undefined, `the append settles, it does not hang (not within ${HANG_MS} ms)`)
  t.type(outcome?.error, EventLogUnavailable, 'append rejects with EventLogUnavailable')
  t.comment(`refused after ${ms} ms (the acknowledgement time-out: 2000 ms)`)

  await nats.restart()
  const appended = await until(
    () =>
      log.append(usageEvents(2, 3)).then(
        () => true,
        () => false,
      ),
    15_000,
  )
  t.ok(appended, 'appends work again after the restart, on the same connection object')
  await waitFor(() => got.length >= 5, 'the follower to resume', 15_000)
  await follower.stop()
  t.same(
    got.map((s) => s.seq),
    [1, 2, 3, 4, 5],
    'the follower resumed where it was, without gaps or repeats',
  )
})
