import { join } from 'node:path'
import t from 'tap'
import { open } from 'lmdb'
import type { UsageRecorded } from '../../src/events/types.js'
import { unitsOf } from '../../src/events/usage-units.js'
import { Projector } from '../../src/projections/projector.js'
import { replay, stateDigest } from '../../src/projections/replay.js'
import { HOUR_MS, KEY_USAGE_HOURS_KEPT } from '../../src/store/records.js'
import { STATE_VERSION, StateStore } from '../../src/store/state-store.js'
import { UsageReportError } from '../../src/usage/errors.js'
import { DAY_MS, usageReport, type UsageQuery } from '../../src/usage/usage-report.js'
import { openLedger } from '../helpers/ledger.js'
import { accountWithKey, T0, tempDir, usageEvent } from './fixtures.js'
import { keyUsageFoldedBefore, keyUsageHours, usageHourly } from '../../src/usage/usage-queries.js'

// T0 is 2023-11-14T22:13:20Z; hours and days below are counted from the hour it falls in.
const H0 = T0 - (T0 % HOUR_MS)

/** The sums a consumer of the log computes: UsageRecorded per key (and period), each id once. */
function expected(events: readonly UsageRecorded[], q: UsageQuery & { from?: number } = {}) {
  const sums = new Map<
    string,
    { accountId: string; keyId: string; period?: number; requests: number; errors: number; bytesIn: number; bytesOut: number; units: number }
  >()
  const seen = new Set<string>()
  for (const e of events) {
    if (seen.has(e.id)) continue
    seen.add(e.id)
    const hour = e.intervalStart - (e.intervalStart % HOUR_MS)
    if (q.accountId !== undefined && e.accountId !== q.accountId) continue
    if (q.keyId !== undefined && e.keyId !== q.keyId) continue
    if (q.from !== undefined && hour < q.from) continue
    if (q.until !== undefined && hour >= q.until) continue
    const period = q.by === 'hour' ? hour : q.by === 'day' ? hour - (hour % DAY_MS) : undefined
    const id = `${e.accountId}|${e.keyId}|${period ?? ''}`
    const row = sums.get(id) ?? {
      accountId: e.accountId,
      keyId: e.keyId,
      ...(period === undefined ? {} : { period }),
      requests: 0,
      errors: 0,
      bytesIn: 0,
      bytesOut: 0,
      units: 0,
    }
    row.requests += e.requests
    row.units += unitsOf(e)
    row.errors += e.errors
    row.bytesIn += e.bytesIn
    row.bytesOut += e.bytesOut
    sums.set(id, row)
  }
  return [...sums.values()].sort((a, b) => (a.accountId + a.keyId).localeCompare(b.accountId + b.keyId) || (a.period ?? 0) - (b.period ?? 0))
}

/** Usage of keys a1, a2 (account a) and b1 (account b) every `stepMs` for `count` steps. */
function usageOver(count: number, stepMs: number, offset = 0): UsageRecorded[] {
  const events: UsageRecorded[] = []
  for (let i = 0; i < count; i++) {
    const at = T0 + offset + i * stepMs
    events.push(
      // key_a1's events carry units (version 2); the others count as version 1 events (26 a call).
      usageEvent({
        accountId: 'acc_a',
        keyId: 'key_a1',
        intervalStart: at,
        requests: 10 + (i % 7),
        errors: i % 3,
        bytesIn: 100 + i,
        bytesOut: 1000 + 3 * i,
        units: 300 * (i % 5),
      }),
    )
    if (i % 2 === 0)
      events.push(
        usageEvent({ accountId: 'acc_a', keyId: 'key_a2', kind: 'archive', intervalStart: at, requests: 5, errors: 1, bytesIn: 50, bytesOut: 7_000_000_000 }),
      )
    events.push(usageEvent({ accountId: 'acc_b', keyId: 'key_b1', instance: 'gw-b', intervalStart: at, requests: 1 + i, errors: 0, bytesIn: 20, bytesOut: 30 }))
  }
  return events
}

t.test('usage per key and per hour or day equals the sums of UsageRecorded, with filters', async (t) => {
  const { log, store } = await openLedger(t)
  const a = accountWithKey('acc_a', '0x' + 'a'.repeat(40))
  // 3 days of 20-minute intervals, appended in chunks and applied in batches of 9.
  const events = usageOver(3 * 72, 20 * 60_000)
  await log.append(a.events)
  for (let i = 0; i < events.length; i += 50) await log.append(events.slice(i, i + 50))
  await log.append(events.slice(0, 5)) // re-sent: the log drops them by id
  await new Projector(store, log, { batch: 9 }).catchUp()
  // A log past its dedup window holds a fact twice: counted once all the same.
  await new Projector(store, log).apply([{ seq: (await log.lastSeq()) + 1, event: events[3]! }])

  t.same(usageReport(store, {}).rows, expected(events), 'per key, since the first event')
  t.equal(usageReport(store, {}).rows.length, 3)
  t.same(usageReport(store, { by: 'hour' }).rows, expected(events, { by: 'hour' }), 'per key and hour')
  t.same(usageReport(store, { by: 'day' }).rows, expected(events, { by: 'day' }), 'per key and UTC day')
  t.equal(usageReport(store, { by: 'day' }).rows.filter((r) => r.keyId === 'key_b1').length, 4, 'three days from 22:00 span four UTC days')
  t.same(usageReport(store, { accountId: 'acc_a' }).rows, expected(events, { accountId: 'acc_a' }))
  t.same(usageReport(store, { keyId: 'key_b1', by: 'hour' }).rows, expected(events, { keyId: 'key_b1', by: 'hour' }))

  const since = H0 + 5 * HOUR_MS + 17 * 60_000 // mid-hour: from that hour on
  const until = H0 + 30 * HOUR_MS
  t.same(usageReport(store, { since, until }).rows, expected(events, { from: H0 + 5 * HOUR_MS, until }), 'since rounds down to its hour, until is exclusive')
  t.same(usageReport(store, { since, until, by: 'hour' }).rows, expected(events, { from: H0 + 5 * HOUR_MS, until, by: 'hour' }))
  t.same(usageReport(store, { since: H0 + 100 * DAY_MS }).rows, [], 'nothing after the last event')

  t.throws(() => usageReport(store, { accountId: 'acc_nobody' }), { name: 'UsageReportError', message: /no account "acc_nobody"/ })
  t.throws(() => usageReport(store, { keyId: 'key_typo' }), { name: 'UsageReportError', message: /no key "key_typo"/ })
  t.same(usageReport(store, { keyId: a.key.keyId }).rows, [], 'a known key without usage: no rows, no error')
})

t.test('hour rows stay bounded; older hours fold into totals that stay exact', async (t) => {
  const { log, store } = await openLedger(t)
  // 80 days, an interval every 5 hours: more than twice the hours kept.
  const events = usageOver((80 * 24) / 5, 5 * HOUR_MS)
  await log.append(events)
  await new Projector(store, log, { batch: 64 }).catchUp()

  const lastHour = H0 + ((80 * 24) / 5 - 1) * 5 * HOUR_MS
  const foldedBefore = keyUsageFoldedBefore(store)
  t.equal(foldedBefore, lastHour - (KEY_USAGE_HOURS_KEPT - 1) * HOUR_MS, 'the last KEY_USAGE_HOURS_KEPT hours are kept')
  const hourRows = [...keyUsageHours(store, 0, Infinity)]
  t.equal(Math.min(...hourRows.map((r) => r.hour)) >= foldedBefore, true, 'no hour row before the fold')
  t.equal(hourRows.length, expected(events, { from: foldedBefore, by: 'hour' }).length, 'one row per key and hour kept, no more')
  t.same(usageReport(store, {}).rows, expected(events), 'totals since the first event are exact')
  t.same(usageReport(store, { since: foldedBefore, by: 'day' }).rows, expected(events, { from: foldedBefore, by: 'day' }))
  t.same(usageReport(store, { until: lastHour }).rows, expected(events, { until: lastHour }), 'folded hours count whole when the range starts at the beginning')

  t.throws(() => usageReport(store, { since: foldedBefore - HOUR_MS }), UsageReportError, 'a bound inside the folded hours is refused')
  t.throws(() => usageReport(store, { since: T0 }), { message: /--since 2023-11-14T22:00:00.000Z falls before .*kept for the last 35 days.*leave out --since/ })
  t.throws(() => usageReport(store, { until: foldedBefore - 1 }), { message: /--until/ })
  const byHour = usageReport(store, { by: 'hour' })
  t.same(byHour.rows, expected(events, { from: foldedBefore, by: 'hour' }), '--by without --since starts at the fold')
  t.match(byHour.notes, [/periods start at/])

  // An outbox re-sends usage of a folded hour after a long outage: it joins the totals.
  const late = usageEvent({ accountId: 'acc_b', keyId: 'key_b1', instance: 'gw-late', intervalStart: T0 + HOUR_MS, requests: 1000, bytesOut: 1 })
  await log.append([late])
  await new Projector(store, log).catchUp()
  t.same(usageReport(store, {}).rows, expected([...events, late]))
  t.equal([...keyUsageHours(store, 0, Infinity)].length, hourRows.length, 'and adds no hour row')

  t.test('replay folds the same rows: the same digest', async (t) => {
    const live = stateDigest(store)
    const dir = tempDir(t, 'key-usage-replay')
    const rebuilt = await replay(join(dir, 'state'), log, { batch: 7 })
    t.equal(rebuilt.digest, live)
  })
})

t.test('an interval of the hour before, sent after the next hour began, counts in its hour whatever the transactions', async (t) => {
  // Two instances: gw-b's interval of 11:00 reaches the log before gw-a's last intervals of 10:00
  // (two outboxes, never in step). The hour's move folds and flushes the rows written so far in
  // the middle of the transaction; the late rows must add to them, not replace them.
  const { log } = await openLedger(t)
  const at = (hour: number, s: number) => H0 + hour * HOUR_MS + s * 1000
  const events = [
    usageEvent({ accountId: 'acc_a', keyId: 'key_a1', instance: 'gw-a', intervalStart: at(1, 3590), requests: 5, errors: 1, bytesIn: 10, bytesOut: 100 }),
    usageEvent({ accountId: 'acc_a', keyId: 'key_a1', instance: 'gw-b', intervalStart: at(1, 3598), requests: 7, bytesIn: 20, bytesOut: 200 }),
    usageEvent({ accountId: 'acc_a', keyId: 'key_a1', instance: 'gw-b', intervalStart: at(2, 0), requests: 11, bytesIn: 40, bytesOut: 400 }),
    usageEvent({ accountId: 'acc_a', keyId: 'key_a1', instance: 'gw-a', intervalStart: at(1, 3595), requests: 13, errors: 2, bytesIn: 80, bytesOut: 800 }),
    usageEvent({ accountId: 'acc_a', keyId: 'key_a1', instance: 'gw-a', intervalStart: at(2, 5), requests: 17, bytesIn: 160, bytesOut: 1600 }),
  ]
  await log.append(events)
  const digests: string[] = []
  for (const batch of [1, 2, 1000]) {
    const store = StateStore.open(join(tempDir(t, `key-usage-late-${batch}`), 'state'))
    t.teardown(() => store.close())
    await new Projector(store, log, { batch }).catchUp()
    t.same(usageReport(store, { by: 'hour' }).rows, expected(events, { by: 'hour' }), `by hour, ${batch} event(s) a transaction`)
    t.same(
      usageHourly(store, 'acc_a', at(1, 0), at(3, 0)).map((r) => r.requests),
      [5 + 7 + 13, 11 + 17],
      `the account's calls by hour, ${batch} event(s) a transaction`,
    )
    digests.push(stateDigest(store))
  }
  t.equal(new Set(digests).size, 1, 'the same state whatever the transactions')
})

t.test('a store built before usage per key and hour was kept is refused with what to do', async (t) => {
  const dir = tempDir(t, 'key-usage-old')
  // What an older gateway left: a checkpoint and no layout version.
  const env = open({ path: join(dir, 'state'), maxDbs: 32 })
  await env.openDB('meta', { encoding: 'msgpack' }).put('checkpoint', 12)
  await env.close()
  const { log, store } = await openLedger(t, { dir })
  t.equal(store.version(), 1)
  t.throws(() => usageReport(store, {}), { name: 'UsageReportError', message: /built before usage per key and hour.*tollgate replay --config FILE/ })
  await log.append(usageOver(3, HOUR_MS))
  await replay(store, log)
  t.equal(store.version(), STATE_VERSION, 'a replay builds it by the current layout')
  t.same(usageReport(store, {}).rows, expected(usageOver(3, HOUR_MS)))
})
