import { cp, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { EmbeddedLog } from '../../src/events/embedded-log.js'
import { JetStreamLog } from '../../src/events/jetstream-log.js'
import type { EventLog } from '../../src/events/log.js'
import { EventLogUnavailable } from '../../src/events/errors.js'
import { Outbox } from '../../src/events/outbox.js'
import type { StoredEvent } from '../../src/events/types.js'
import { startNats, type NatsServer } from '../../harness/nats-server.js'
import { usageEvents, waitFor } from './log-suite.js'

const nats = await startNats()
t.teardown(() => nats.stop())

async function tempDir(t: Test): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tollgate-outbox-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  return dir
}

async function readAll(log: EventLog): Promise<StoredEvent[]> {
  const all: StoredEvent[] = []
  for (;;) {
    const page = await log.read(all.length + 1, 1000)
    if (page.length === 0) return all
    all.push(...page)
  }
}

let streams = 0
async function connectLog(t: Test, server: NatsServer = nats): Promise<JetStreamLog> {
  streams += 1
  const log = await JetStreamLog.connect({
    servers: server.url,
    stream: `OUTBOX${streams}`,
    subjectPrefix: `outbox${streams}`,
    replicas: 1,
    timeoutMs: 1000,
  })
  t.teardown(() => log.close())
  return log
}

/** Wait until the log answers again after a restart (the client reconnects on its own). */
async function untilReachable(log: EventLog): Promise<void> {
  // 15 s is an outer bound, so that a server that never comes back fails the test instead of hanging it.
  await waitFor(
    () =>
      log.lastSeq().then(
        () => true,
        () => false,
      ),
    'NATS to come back',
    15_000,
  )
}

t.test('outbox: an embedded log receives every event once, in publish order', async (t) => {
  const dir = await tempDir(t)
  const log = EmbeddedLog.open(join(dir, 'log'))
  t.teardown(() => log.close())
  const outbox = Outbox.open(join(dir, 'outbox'), log)
  t.teardown(() => outbox.close())
  const events = usageEvents(1200)
  for (let i = 0; i < events.length; i += 7) outbox.publish(events.slice(i, i + 7))
  outbox.publish(events.slice(0, 5)) // re-sent: stored once
  await outbox.flush()
  t.equal(outbox.pending(), 0)
  const stored = await readAll(log)
  t.same(
    stored.map((s) => s.event.id),
    events.map((e) => e.id),
  )
})

t.test('outbox: NATS killed and restarted while publishing loses no event and duplicates none', async (t) => {
  const dir = await tempDir(t)
  const log = await connectLog(t)
  const errors: unknown[] = []
  // Small batches, so that the kill lands between appends or in the middle of one (an event
  // stored whose acknowledgement is lost must be re-sent and deduplicated, not lost nor doubled).
  const outbox = Outbox.open(join(dir, 'outbox'), log, {
    retryMs: 20,
    maxRetryMs: 200,
    batchSize: 20,
    onError: (err) => errors.push(err),
  })
  t.teardown(() => outbox.close())
  const events = usageEvents(600)

  for (let i = 0; i < 200; i += 10) outbox.publish(events.slice(i, i + 10))
  await waitFor(() => outbox.pending() < 180, 'the first appends')
  await nats.kill()
  for (let i = 200; i < 400; i += 10) outbox.publish(events.slice(i, i + 10))
  t.ok(outbox.pending() >= 200, `what was published during the outage is held (${outbox.pending()})`)
  await waitFor(() => errors.length > 0, 'the outbox to meet the outage')
  t.ok(
    errors.every((err) => err instanceof EventLogUnavailable),
    'failures are reported as EventLogUnavailable',
  )
  await nats.restart()
  for (let i = 400; i < 600; i += 10) outbox.publish(events.slice(i, i + 10))
  await outbox.flush(20_000)

  const stored = await readAll(log)
  t.equal(stored.length, 600, 'every event stored exactly once')
  t.same(new Set(stored.map((s) => s.event.id)), new Set(events.map((e) => e.id)), 'and they are the published ones')
})

t.test('outbox: events queued by one outbox are delivered by the next one on the same path', async (t) => {
  const dir = await tempDir(t)
  const log = await connectLog(t)
  const events = usageEvents(50, 9000)
  await nats.kill()

  const first = Outbox.open(join(dir, 'outbox'), log, { retryMs: 20 })
  first.publish(events)
  await first.flush(300).then(
    () => t.fail('nothing can be delivered while NATS is down'),
    (err: Error) => t.equal(err.name, 'OutboxFlushTimeout'),
  )
  t.equal(first.pending(), 50)
  await first.close()

  await nats.restart()
  await untilReachable(log)
  const second = Outbox.open(join(dir, 'outbox'), log, { retryMs: 20 })
  t.teardown(() => second.close())
  t.equal(second.pending(), 50, 'the next outbox finds the queued events on disk')
  await second.flush(15_000)
  const stored = await readAll(log)
  t.same(
    stored.map((s) => s.event.id),
    events.map((e) => e.id),
    'delivered once, in order',
  )
})

t.test('outbox: events the server acknowledged and then lost (its disk as a power cut leaves it) are sent again on reconnection, once', async (t) => {
  // A server of its own: its store is rolled back, as a machine that lost power keeps only what
  // reached the disk (nats-server 2.9 fsyncs its stream store every 2 minutes).
  const server = await startNats()
  t.teardown(() => server.stop())
  const dir = await tempDir(t)
  const log = await connectLog(t, server)
  const resent: number[] = []
  const outbox = Outbox.open(join(dir, 'outbox'), log, { retryMs: 20, onResent: (n) => resent.push(n) })
  t.teardown(() => outbox.close())
  const events = usageEvents(100, 20_000)

  outbox.publish(events.slice(0, 50))
  await outbox.flush()
  await server.kill()
  const synced = join(dir, 'synced')
  await cp(server.storeDir, synced, { recursive: true })
  await server.restart()
  await untilReachable(log)
  await outbox.flush(15_000)
  t.equal(await log.lastSeq(), 50, 'the disk that will come back holds the first 50')

  outbox.publish(events.slice(50))
  await outbox.flush()
  t.equal(await log.lastSeq(), 100, 'all 100 acknowledged')
  t.equal(outbox.kept(), 100, 'and kept for a resend')
  resent.length = 0
  await server.kill()
  await rm(server.storeDir, { recursive: true, force: true })
  await cp(synced, server.storeDir, { recursive: true })
  await server.restart()
  await untilReachable(log)
  await waitFor(() => resent.length > 0, 'the resend after the reconnection', 15_000)
  await outbox.flush(15_000)

  t.same(resent, [100], 'every kept event sent again')
  const stored = await readAll(log)
  t.equal(stored.length, 100, 'the 50 lost are stored again, the 50 held are not stored twice')
  t.same(new Set(stored.map((s) => s.event.id)), new Set(events.map((e) => e.id)), 'and they are the published ones')
})

t.test('outbox: only events acknowledged within the resend window are kept and sent again, at most resendMax', async (t) => {
  const dir = await tempDir(t)
  const log = EmbeddedLog.open(join(dir, 'log'))
  t.teardown(() => log.close())
  let now = 1_700_000_000_000
  const opts = { now: () => now, resendWindowMs: 120_000, resendMax: 25 }
  const first = Outbox.open(join(dir, 'outbox'), log, opts)
  const events = usageEvents(40, 30_000)
  first.publish(events.slice(0, 10))
  await first.flush()
  now += 90_000
  first.publish(events.slice(10, 20))
  await first.flush()
  t.equal(first.kept(), 20, 'both appends kept')
  now += 60_000 // the first append is 150 s old, the second 60 s
  first.publish(events.slice(20, 30))
  await first.flush()
  t.equal(first.kept(), 20, 'the append past the window is dropped')
  now += 1_000
  first.publish(events.slice(30, 40))
  await first.flush()
  t.equal(first.kept(), 20, 'beyond resendMax the oldest append is dropped')
  await first.close()

  // Opened again (as after a restart): what is kept is sent again; the log holds it already.
  const resent: number[] = []
  const second = Outbox.open(join(dir, 'outbox'), log, { ...opts, onResent: (n) => resent.push(n) })
  t.teardown(() => second.close())
  t.equal(second.kept(), 20, 'the kept events are found on disk')
  await second.flush()
  t.same(resent, [20], 'and sent again')
  now += 120_000 // the third append is now 121 s old, the fourth 120 s
  t.equal(second.kept(), 10, 'a kept event leaves once its window has passed')
  const stored = await readAll(log)
  t.same(
    stored.map((s) => s.event.id),
    events.map((e) => e.id),
    'each event stored once, in order',
  )
})
