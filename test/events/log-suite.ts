import type { Test } from 'tap'
import type { EventLog } from '../../src/events/log.js'
import { makeEvent } from '../../src/events/make-event.js'
import type { StoredEvent, TollgateEvent, UsageRecorded } from '../../src/events/types.js'
import { waitFor } from '../helpers/eventually.js'

/** One log to test, and a way to open another instance on the same log (another path open, another connection). */
export interface OpenedLog {
  log: EventLog
  /** An independent instance of the same log, as a second process would open it. */
  another(): Promise<EventLog>
  /** Close everything opened and remove what was created. */
  cleanup(): Promise<void>
}

/** `n` distinct UsageRecorded events (distinct intervalStart, hence distinct ids). */
export function usageEvents(n: number, offset = 0, instance = 'suite'): UsageRecorded[] {
  const events: UsageRecorded[] = []
  for (let i = offset; i < offset + n; i++) {
    const intervalStart = 1_700_000_000_000 + i * 1000
    events.push(
      makeEvent<UsageRecorded>(
        {
          type: 'UsageRecorded',
          accountId: 'acc-1',
          keyId: 'key-1',
          network: 'eth-1',
          kind: 'full',
          instance,
          intervalStart,
          intervalMs: 1000,
          requests: i,
          errors: 0,
          bytesIn: 10,
          bytesOut: 20,
        },
        intervalStart + 1000,
      ),
    )
  }
  return events
}

export { waitFor }

const idsOf = (stored: StoredEvent[]): string[] => stored.map((s) => s.event.id)
const seqsOf = (stored: StoredEvent[]): number[] => stored.map((s) => s.seq)
const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i)

/** Follow `log` from `from` into an array; the caller stops it. */
function collect(log: EventLog, from: number): { got: StoredEvent[]; stop(): Promise<void> } {
  const got: StoredEvent[] = []
  const follower = log.follow(from, async (batch) => {
    got.push(...batch)
  })
  return { got, stop: () => follower.stop() }
}

/**
 * The behaviour every EventLog adapter must have. Each subtest opens a fresh, empty log.
 * @example
 * runEventLogSuite(t, 'embedded', async () => { ... return { log, another, cleanup } })
 */
export function runEventLogSuite(t: Test, name: string, open: () => Promise<OpenedLog>): void {
  const withLog = logOpener(t, name, open)

  withLog('appends in order, seq from 1, lastSeq', async (t, { log }) => {
    t.equal(await log.lastSeq(), 0, 'an empty log has lastSeq 0')
    t.same(await log.read(1, 10), [], 'an empty log reads nothing')
    const first = usageEvents(3)
    const second = usageEvents(2, 3)
    await log.append(first)
    await log.append(second)
    t.equal(await log.lastSeq(), 5)
    const all = await log.read(1, 100)
    t.same(seqsOf(all), [1, 2, 3, 4, 5])
    t.same(
      all.map((s) => s.event),
      [...first, ...second],
      'events come back equal and in append order',
    )
    t.same(seqsOf(await log.read(2, 2)), [2, 3], 'read honours from and limit')
    t.same(await log.read(6, 10), [], 'reading past the end gives nothing')
    await log.append([])
    t.equal(await log.lastSeq(), 5, 'an empty append stores nothing')
  })

  withLog('a duplicate id is accepted and stored once', async (t, { log }) => {
    const events = usageEvents(3)
    await log.append(events)
    await log.append([events[1], ...usageEvents(1, 3), events[0]])
    await log.append([events[2], events[2]])
    const all = await log.read(1, 100)
    t.same(
      idsOf(all),
      [...events, ...usageEvents(1, 3)].map((e) => e.id),
    )
    t.equal(await log.lastSeq(), 4)
  })

  withLog('follow delivers existing events, then new ones, in order', async (t, { log }) => {
    await log.append(usageEvents(3))
    const follower = collect(log, 1)
    t.teardown(() => follower.stop())
    await waitFor(() => follower.got.length >= 3, 'the existing events')
    await log.append(usageEvents(4, 3))
    await waitFor(() => follower.got.length >= 7, 'the new events')
    await follower.stop()
    t.same(seqsOf(follower.got), range(1, 7))
    t.same(
      idsOf(follower.got),
      usageEvents(7).map((e) => e.id),
    )
  })

  withLog('follow from the middle starts there', async (t, { log }) => {
    await log.append(usageEvents(5))
    const follower = collect(log, 4)
    t.teardown(() => follower.stop())
    await waitFor(() => follower.got.length >= 2, 'events 4 and 5')
    await log.append(usageEvents(1, 5))
    await waitFor(() => follower.got.length >= 3, 'event 6')
    await follower.stop()
    t.same(seqsOf(follower.got), [4, 5, 6])
  })

  withLog('a rejected batch is delivered again', async (t, { log }) => {
    await log.append(usageEvents(2))
    const delivered: number[][] = []
    let rejections = 0
    const follower = log.follow(1, async (batch) => {
      delivered.push(seqsOf(batch))
      if (rejections++ === 0) throw new Error('projection failed to commit')
    })
    t.teardown(() => follower.stop())
    await waitFor(() => delivered.length >= 2, 'the second delivery')
    await follower.stop()
    t.same(delivered[1], delivered[0], 'the same batch again')
    t.same(delivered[0], [1, 2])
  })

  withLog('another instance of the same log sees appends, and its appends are followed', async (t, { log, another }) => {
    const other = await another()
    await log.append(usageEvents(2))
    t.equal(await other.lastSeq(), 2, 'the other instance sees appends at once')
    t.same(
      idsOf(await other.read(1, 10)),
      usageEvents(2).map((e) => e.id),
    )
    const follower = collect(log, 1)
    t.teardown(() => follower.stop())
    await waitFor(() => follower.got.length >= 2, 'the first events')
    await other.append([...usageEvents(1, 1), ...usageEvents(2, 2, 'other')])
    await waitFor(() => follower.got.length >= 4, "the other instance's appends")
    await follower.stop()
    t.same(seqsOf(follower.got), [1, 2, 3, 4], 'the duplicate sent by the other instance is not stored')
  })

  withLog('large batches: 5,000 events append, read and follow', async (t, { log }) => {
    const events = usageEvents(5000)
    await log.append(events)
    t.equal(await log.lastSeq(), 5000)
    const read: StoredEvent[] = []
    for (let from = 1; from <= 5000; from += 2000) read.push(...(await log.read(from, 2000)))
    t.same(seqsOf(read), range(1, 5000), 'read in pages')
    t.same(
      idsOf(read),
      events.map((e) => e.id),
    )
    const follower = collect(log, 1)
    t.teardown(() => follower.stop())
    await waitFor(() => follower.got.length >= 5000, 'all 5,000 followed')
    await follower.stop()
    t.same(seqsOf(follower.got), range(1, 5000))
  })

  runReadAllSuite(withLog)
  runAccountStreamSuite(withLog)
}

type WithLog = (title: string, body: (t: Test, opened: OpenedLog) => Promise<void>) => void

/** Subtests named `<name>: <title>`, each on a fresh log from `open`, closed at its end. */
function logOpener(t: Test, name: string, open: () => Promise<OpenedLog>): WithLog {
  return (title, body) => {
    t.test(`${name}: ${title}`, async (t) => {
      const opened = await open()
      t.teardown(() => opened.cleanup())
      await body(t, opened)
    })
  }
}

/**
 * Only the readAll part of the suite: for an adapter that reads in more than one way (JetStream
 * reads long ranges in a worker thread), run again with the other way.
 */
export function runReadAllTests(t: Test, name: string, open: () => Promise<OpenedLog>): void {
  runReadAllSuite(logOpener(t, name, open))
}

function runReadAllSuite(withLog: WithLog): void {
  withLog('readAll: from a seq up to the last as of the call, in order, in batches of at most `batch`', async (t, { log }) => {
    t.equal(await log.readAll(1, () => void t.fail('an empty log delivers nothing')), 0, 'an empty log: nothing read, 0')
    const events = usageEvents(12_345)
    await log.append(events)
    const sizes: number[] = []
    const got: StoredEvent[] = []
    const last = await log.readAll(
      1,
      async (batch) => {
        sizes.push(batch.length)
        got.push(...batch)
        // Appended while reading: after the last seq as of the call, so not read.
        if (sizes.length === 1) await log.append(usageEvents(3, 20_000))
      },
      { batch: 5000 },
    )
    t.equal(last, 12_345, 'resolves with the last seq delivered')
    t.same(sizes, [5000, 5000, 2345])
    t.same(seqsOf(got), range(1, 12_345))
    t.same(
      idsOf(got),
      events.map((e) => e.id),
      'the events, in append order',
    )

    const middle: StoredEvent[] = []
    const sizesMiddle: number[] = []
    t.equal(
      await log.readAll(
        100,
        (batch) => {
          middle.push(...batch)
          sizesMiddle.push(batch.length)
        },
        { to: 7000, batch: 3000 },
      ),
      7000,
    )
    t.same(sizesMiddle, [3000, 3000, 901], 'from 100 to 7000')
    t.same(seqsOf(middle), range(100, 7000))
    t.equal(await log.readAll(12_349, () => void t.fail('nothing after the end')), 12_348, 'from past the end: nothing, from - 1')
  })

  withLog('readAll: a batch that fails ends the read with its error; nothing more is delivered', async (t, { log }) => {
    await log.append(usageEvents(2500))
    const delivered: number[] = []
    const failure = new Error('projection failed to commit')
    await t.rejects(
      log.readAll(
        1,
        (batch) => {
          delivered.push(batch.firstSeq!)
          if (delivered.length === 2) throw failure
        },
        { batch: 1000 },
      ),
      failure,
    )
    t.same(delivered, [1, 1001], 'the third batch is never delivered')
    t.same(seqsOf(await log.read(2400, 200)), range(2400, 2500), 'the log reads on afterwards')
  })
}

/** The events of a new account (its own stream), distinct per `n`. */
function accountEvents(accountId: string, n: number, from = 0): TollgateEvent[] {
  const out: TollgateEvent[] = []
  for (let i = from; i < from + n; i++) {
    out.push(makeEvent({ type: 'DomainsRestricted', accountId, keyId: `key-${accountId}`, domains: [`d${i}.example`] }, 1_700_000_000_000 + i))
  }
  return out
}

/** The account-stream part of the suite: expected versions, as the account deciders use them. */
function runAccountStreamSuite(withLog: WithLog): void {
  withLog('an account stream: versions, its events only, in order', async (t, { log }) => {
    t.same(await log.readAccount('acc-a'), { events: [], version: 0 }, 'an account without events is at version 0')
    const first = await log.appendToAccount('acc-a', accountEvents('acc-a', 2), 0)
    await log.append(usageEvents(2)) // other subjects move the log, not the account
    await log.appendToAccount('acc-b', accountEvents('acc-b', 1), 0)
    const second = await log.appendToAccount('acc-a', accountEvents('acc-a', 1, 2), first)
    const read = await log.readAccount('acc-a')
    t.equal(read.version, second, 'the version is the seq of its last event')
    t.same(seqsOf(read.events), [1, 2, 6])
    t.same(
      idsOf(read.events),
      accountEvents('acc-a', 3).map((e) => e.id),
    )
    t.same(seqsOf((await log.readAccount('acc-b')).events), [5])
  })

  withLog('an account read past a version gives only what is new, at the same version', async (t, { log }) => {
    const v1 = await log.appendToAccount('acc-n', accountEvents('acc-n', 2), 0)
    t.same(await log.readAccount('acc-n', v1), { events: [], version: v1 }, 'nothing new')
    await log.append(usageEvents(1))
    const v2 = await log.appendToAccount('acc-n', accountEvents('acc-n', 1, 2), v1)
    const read = await log.readAccount('acc-n', v1)
    t.same(seqsOf(read.events), [v2])
    t.equal(read.version, v2)
  })

  withLog('an append at a stale version is refused and stores nothing', async (t, { log }) => {
    const v1 = await log.appendToAccount('acc-a', accountEvents('acc-a', 1), 0)
    await t.rejects(
      log.appendToAccount('acc-a', accountEvents('acc-a', 1, 1), 0),
      { name: 'WrongExpectedVersion' },
      'a second command decided on version 0 loses',
    )
    t.equal(await log.lastSeq(), 1, 'nothing of the losing command is stored')
    const v2 = await log.appendToAccount('acc-a', accountEvents('acc-a', 2, 1), v1)
    t.equal((await log.readAccount('acc-a')).version, v2)
    t.equal(await log.lastSeq(), 3)
  })

  withLog('an event another command appended since our version is a conflict, not a success', async (t, { log }) => {
    // JetStream answers a duplicate msgID before it checks the expected sequence: the append of a
    // command whose first event another command already stored must still be refused.
    const [first, second] = accountEvents('acc-d', 2)
    await log.appendToAccount('acc-d', [first!], 0)
    await t.rejects(log.appendToAccount('acc-d', [first!, second!], 0), { name: 'WrongExpectedVersion' })
    t.same(idsOf((await log.readAccount('acc-d')).events), [first!.id], 'nothing of the stale command is stored')
  })

  withLog('two instances racing on one account: exactly one wins', async (t, { log, another }) => {
    const other = await another()
    const results = await Promise.allSettled([
      log.appendToAccount('acc-r', accountEvents('acc-r', 2), 0),
      other.appendToAccount('acc-r', accountEvents('acc-r', 2, 10), 0),
    ])
    t.equal(results.filter((r) => r.status === 'fulfilled').length, 1, 'one append is stored')
    t.equal(results.filter((r) => r.status === 'rejected' && (r.reason as Error).name === 'WrongExpectedVersion').length, 1, 'the other is refused')
    t.equal((await log.readAccount('acc-r')).events.length, 2)
  })

  withLog('account events appended without a version (PlanEnded from the outbox) move the version', async (t, { log }) => {
    const v1 = await log.appendToAccount('acc-a', accountEvents('acc-a', 1), 0)
    await log.append([makeEvent({ type: 'PlanEnded', accountId: 'acc-a', planId: 'tier-1', reason: 'expired' }, 1_700_000_000_500)])
    await t.rejects(log.appendToAccount('acc-a', accountEvents('acc-a', 1, 1), v1), { name: 'WrongExpectedVersion' })
    t.equal((await log.readAccount('acc-a')).version, 2)
  })
}

export type { TollgateEvent }
