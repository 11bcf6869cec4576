import { join } from 'node:path'
import t from 'tap'
import type { KeyRuleRefused } from '../../src/events/types.js'
import { Projector } from '../../src/projections/projector.js'
import { replay, stateDigest } from '../../src/projections/replay.js'
import { HOUR_MS, KEY_USAGE_HOURS_KEPT, REFUSAL_RULES, type RefusalsByRule } from '../../src/store/records.js'
import { StateStore } from '../../src/store/state-store.js'
import { accountRefusals, keyUsageFoldedBefore } from '../../src/usage/usage-queries.js'
import { usageReport } from '../../src/usage/usage-report.js'
import { openLedger } from '../helpers/ledger.js'
import { ev, T0, tempDir, usageEvent } from './fixtures.js'

// KeyRuleRefused in the usage projection: per key and hour beside the calls served, each id once,
// folded with the hours, the same after a replay whatever the transactions.
const H0 = T0 - (T0 % HOUR_MS)

function refused(o: { accountId?: string; keyId?: string; instance?: string; rule: KeyRuleRefused['rule']; at: number; count: number }): KeyRuleRefused {
  return ev<KeyRuleRefused>({
    type: 'KeyRuleRefused',
    accountId: o.accountId ?? 'acc_a',
    keyId: o.keyId ?? 'key_a1',
    network: 'eth-1',
    instance: o.instance ?? 'gw-a',
    intervalStart: o.at,
    intervalMs: 10_000,
    rule: o.rule,
    count: o.count,
  })
}

/** What a consumer of the log sums: refusals per key (and hour), each id once. */
function expected(events: readonly KeyRuleRefused[], q: { keyId?: string; by?: 'hour'; from?: number; to?: number } = {}): Map<string, RefusalsByRule> {
  const sums = new Map<string, RefusalsByRule>()
  const seen = new Set<string>()
  for (const e of events) {
    if (seen.has(e.id)) continue
    seen.add(e.id)
    const hour = e.intervalStart - (e.intervalStart % HOUR_MS)
    if (q.keyId !== undefined && e.keyId !== q.keyId) continue
    if ((q.from !== undefined && hour < q.from) || (q.to !== undefined && hour >= q.to)) continue
    const id = `${e.keyId}|${q.by === 'hour' ? hour : ''}`
    const sum = sums.get(id) ?? {}
    sum[e.rule] = (sum[e.rule] ?? 0) + e.count
    sums.set(id, sum)
  }
  return sums
}

function reported(store: StateStore, by?: 'hour'): Map<string, RefusalsByRule> {
  const out = new Map<string, RefusalsByRule>()
  for (const row of usageReport(store, { by }).rows) if (row.refused !== undefined) out.set(`${row.keyId}|${row.period ?? ''}`, row.refused)
  return out
}

/** Refusals of two keys of acc_a and one of acc_b every `stepMs`, by two instances, every rule in turn. */
function refusalsOver(count: number, stepMs: number): KeyRuleRefused[] {
  const events: KeyRuleRefused[] = []
  for (let i = 0; i < count; i++) {
    const at = H0 + i * stepMs
    events.push(refused({ rule: REFUSAL_RULES[i % 4]!, at, count: 1 + (i % 5) }))
    events.push(refused({ instance: 'gw-b', rule: 'method', at, count: 2 }))
    if (i % 3 === 0) events.push(refused({ keyId: 'key_a2', rule: 'contract', at, count: 7 }))
    events.push(refused({ accountId: 'acc_b', keyId: 'key_b1', rule: 'ip', at, count: 1 }))
  }
  return events
}

t.test('refusals by rule per key and hour, beside the calls served, each id once', async (t) => {
  const { log, store } = await openLedger(t)
  const events = refusalsOver(3 * 24, 20 * 60_000)
  const served = usageEvent({ accountId: 'acc_a', keyId: 'key_a1', intervalStart: H0 + 5 * 60_000, requests: 9, errors: 1, bytesIn: 10, bytesOut: 20 })
  await log.append([served, ...events])
  await log.append(events.slice(0, 4)) // re-sent within the log's window: dropped by id
  await new Projector(store, log, { batch: 11 }).catchUp()
  // Past the log's window, a fact stored twice: counted once all the same.
  await new Projector(store, log).apply([{ seq: (await log.lastSeq()) + 1, event: events[2]! }])

  t.same(reported(store), expected(events), 'per key, every rule')
  t.same(reported(store, 'hour'), expected(events, { by: 'hour' }), 'per key and hour')
  const first = usageReport(store, { keyId: 'key_a1', by: 'hour' }).rows[0]!
  t.match(first, { requests: 9, errors: 1, bytesIn: 10, bytesOut: 20 }, 'the calls served of the same hour are kept beside them')
  t.same(first.refused, expected(events, { keyId: 'key_a1', by: 'hour' }).get(`key_a1|${H0}`))
  const whole = expected(events.filter((e) => e.accountId === 'acc_a'))
  const sum = (...parts: RefusalsByRule[]) =>
    Object.fromEntries(REFUSAL_RULES.map((r) => [r, parts.reduce((n, p) => n + (p[r] ?? 0), 0)]).filter(([, n]) => (n as number) > 0))
  t.same(accountRefusals(store, 'acc_a', H0, H0 + 3 * 24 * HOUR_MS), sum(...whole.values()), "the account's refusals: every key of it")
  const window = expected(
    events.filter((e) => e.accountId === 'acc_a'),
    { from: H0 + HOUR_MS, to: H0 + 3 * HOUR_MS },
  )
  t.same(accountRefusals(store, 'acc_a', H0 + HOUR_MS + 60_000, H0 + 3 * HOUR_MS), sum(...window.values()), 'the hours of a window (from its first hour on)')
  t.same(accountRefusals(store, 'acc_nobody', H0, H0 + 72 * HOUR_MS), {}, 'an account without refusals: none')

  t.test('a replay gives the same rows whatever its transactions', async (t) => {
    // The store above also holds an event the log has not (the fact stored twice): another one.
    const other = StateStore.open(join(tempDir(t, 'refusals-live'), 'state'))
    t.teardown(() => other.close())
    await new Projector(other, log, { batch: 11 }).catchUp()
    const live = stateDigest(other)
    for (const batch of [1, 5, 1000]) {
      const rebuilt = await replay(join(tempDir(t, `refusals-replay-${batch}`), 'state'), log, { batch })
      t.equal(rebuilt.digest, live, `${batch} event(s) a transaction`)
    }
  })
})

t.test('refusals fold with their hours and stay exact', async (t) => {
  const { log, store } = await openLedger(t)
  // 80 days, every 5 hours: more than twice the hours kept by hour.
  const events = refusalsOver((80 * 24) / 5, 5 * HOUR_MS)
  await log.append(events)
  await new Projector(store, log, { batch: 64 }).catchUp()
  const foldedBefore = keyUsageFoldedBefore(store)
  t.ok(foldedBefore > H0 && foldedBefore > H0 + 80 * 24 * HOUR_MS - (KEY_USAGE_HOURS_KEPT + 5) * HOUR_MS, 'hours were folded')
  t.same(reported(store), expected(events), 'totals since the first event, folded hours included')
  const kept = new Map([...reported(store, 'hour')].filter(([id]) => Number(id.split('|')[1]) >= foldedBefore))
  t.same(kept, expected(events, { by: 'hour', from: foldedBefore }), 'the hours kept')
})
