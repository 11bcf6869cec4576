import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { EmbeddedLog } from '../../src/events/embedded-log.js'
import { JetStreamLog } from '../../src/events/jetstream-log.js'
import { EventLogUnavailable, type EventLog } from '../../src/events/log.js'
import { Outbox } from '../../src/events/outbox.js'
import type { StoredEvent } from '../../src/events/types.js'
import { startNats } from '../helpers/nats-server.js'
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
async function connectLog(t: Test): Promise<JetStreamLog> {
  streams += 1
  const log = await JetStreamLog.connect({
    servers: nats.url,
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
  const deadline = Date.now() + 15_000
  while (Date.now() < deadline) {
    if (await log.lastSeq().then(() => true, () => false)) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error('NATS did not come back within 15 s')
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
  t.same(stored.map((s) => s.event.id), events.map((e) => e.id))
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
  t.ok(errors.every((err) => err instanceof EventLogUnavailable), 'failures are reported as EventLogUnavailable')
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
  t.same(stored.map((s) => s.event.id), events.map((e) => e.id), 'delivered once, in order')
})
