import t from 'tap'
import { FakeClock } from '../helpers/fake-clock.js'
import { openLedger } from '../helpers/ledger.js'
import type { UsageRecorded } from '../../src/events/types.js'
import { DAY_MS, HOUR_MS, USAGE_HOURLY_KEPT_MS } from '../../src/store/records.js'
import type { StateDbName } from '../../src/store/state-store.js'
import { USAGE_IDS_KEPT_MS, USAGE_PRODUCERS_KEPT_MS } from '../../src/usage/usage-dedup.js'
import { T0, usageEvent } from './fixtures.js'
import { usageHourly, usageTotals } from '../../src/usage/usage-queries.js'

/*
 * The usage tables that would grow with every event stay bounded: the ids counted (a window of
 * USAGE_IDS_KEPT_MS behind the newest interval), the producers' watermarks (USAGE_PRODUCERS_KEPT_MS)
 * and the dashboard's hours (USAGE_HOURLY_KEPT_MS). Their windows move with the events' intervals,
 * never with a clock read by the projection (so a replay keeps the same rows): a fake clock makes
 * those intervals here, three instances reporting one key every 10 s, and jumps months ahead.
 * A re-delivered event (a log past its dedup window holds it at a second seq) is never counted twice.
 */

const MINUTE = 60_000
const STEP = 10_000
const INSTANCES = ['gw-a', 'gw-b', 'gw-c']

const { store, projector } = await openLedger(t)
const clock = new FakeClock(T0 - (T0 % HOUR_MS))
let seq = 0
const sent: UsageRecorded[] = []

/** Apply events as the log delivers them, each at a new seq (a re-sent one too). */
const deliver = (events: UsageRecorded[]) => projector.apply(events.map((event) => ({ seq: ++seq, event })))
/** Every instance reports the interval that starts now, then the clock moves one interval on. */
async function tick(): Promise<void> {
  const intervalStart = clock.now()
  const events = INSTANCES.map((instance, i) => usageEvent({ accountId: 'acc_a', keyId: 'key_a', instance, intervalStart, requests: 1 + i }))
  await deliver(events)
  sent.push(...events)
  clock.advance(STEP)
}
const rows = (db: StateDbName): number => [...store.entries()].filter((e) => e.db === db).length
const counted = (): number => usageTotals(store).requests
const served = (): number => sent.reduce((n, e) => n + e.requests, 0)

t.test('ids counted: only those of the window behind the newest interval, however long the stream', async (t) => {
  const maxIds = INSTANCES.length * ((USAGE_IDS_KEPT_MS + MINUTE) / STEP) // the window moves by whole minutes
  let largest = 0
  let exact = true
  for (let i = 0; i < 30 * (MINUTE / STEP); i++) {
    await tick()
    const newest = clock.now() - STEP
    const horizon = newest - (newest % MINUTE) - USAGE_IDS_KEPT_MS
    const ids = rows('usageEvents')
    largest = Math.max(largest, ids)
    if (ids !== sent.filter((e) => e.intervalStart >= horizon).length) exact = false
  }
  t.ok(exact, 'after every interval, the ids kept are exactly those of the window')
  t.ok(largest <= maxIds, `at most ${largest} ids kept for ${sent.length} events (bound ${maxIds})`)
  t.equal(rows('usageProducers'), INSTANCES.length, 'older ones are one watermark per producer')
  t.equal(counted(), served(), 'every event counted once')
})

t.test('a re-delivered event is not counted twice, inside the id window or behind it', async (t) => {
  const recent = sent.at(-INSTANCES.length - 1)! // 20 s old: its id is kept
  const old = sent[sent.length - 10 * INSTANCES.length * (MINUTE / STEP)]! // 10 minutes old: behind its producer's watermark
  const before = rows('usageEvents')
  await deliver([recent, { ...old }, recent])
  t.equal(counted(), served(), 'the totals did not move')
  t.equal(rows('usageEvents'), before, 'and nothing was added to remember them')
  await tick()
  t.equal(counted(), served(), 'the next interval counts as usual')
})

t.test('months later: the old ids, watermarks and hours are gone; a re-delivered old event still counts nothing', async (t) => {
  t.equal(rows('usageHourly'), 1, 'the dashboard hour of the first half hour')
  clock.advance(USAGE_PRODUCERS_KEPT_MS + 2 * DAY_MS)
  const hour = clock.now() - (clock.now() % HOUR_MS)
  await tick()
  t.equal(rows('usageEvents'), INSTANCES.length, 'only the ids of the new interval')
  t.equal(rows('usageProducers'), 0, 'producers silent for longer than their window are forgotten')
  const hours = usageHourly(store, 'acc_a', 0, hour + HOUR_MS).map((r) => r.hour)
  t.same(hours, [hour], `the dashboard's hours older than ${USAGE_HOURLY_KEPT_MS / DAY_MS} days are dropped`)
  await deliver([sent[0]!, sent[1]!])
  t.equal(counted(), served(), 'usage older than every window is not counted again')
  t.equal(rows('usageProducers'), 0, 'and leaves nothing behind')
})
