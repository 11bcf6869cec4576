import { join } from 'node:path'
import t from 'tap'
import { encodeEvent } from '../../src/events/codec.js'
import { EventBatch } from '../../src/events/event-batch.js'
import type { EventLog } from '../../src/events/log.js'
import type { TollgateEvent } from '../../src/events/types.js'
import { replay } from '../../src/projections/replay.js'
import { StateStore } from '../../src/store/state-store.js'
import { HOUR_MS } from '../../src/store/records.js'
import { usageTotals } from '../../src/usage/usage-queries.js'
import { T0, tempDir, usageEvent } from './fixtures.js'

/*
 * A history spread over many hours (a week and more of a gateway whose keys are called every
 * hour), where a transaction spans hours and days: the usage rows skip the fold of key hours and
 * the drop of account hours while nothing is old enough for them (each of those wrote the
 * transaction's rows through to LMDB and then looked every new row up there). The stream runs
 * past the 8 days of account hours and the 35 days of key hours, with late intervals of hours
 * before, so that both windows move, drop and fold; replayed in one transaction, in transactions
 * of 97 events and of 1,000, it must leave the state the code before the skips left.
 */

const hour0 = T0 - (T0 % HOUR_MS)
const keys = ['key_a', 'key_b', 'key_c', 'key_d'].map((keyId, i) => ({ accountId: `acc_${i % 2}`, keyId }))
const stream: TollgateEvent[] = []
let served = 0
for (let h = 0; h < 37 * 24; h++) {
  for (const [k, { accountId, keyId }] of keys.entries()) {
    // Not every key every hour: some hours of an account have no rows.
    if ((h + k) % 5 === 4) continue
    const requests = (h % 3) * (k + 1) // 0 some hours: no account hour then
    stream.push(usageEvent({ accountId, keyId, intervalStart: hour0 + h * HOUR_MS + k * 1_000, requests, units: requests * 2 }))
    served += requests
  }
  if (h % 50 === 49) {
    // A late interval of two days before (an outbox that sends after an outage).
    const late = usageEvent({ accountId: 'acc_1', keyId: 'key_b', instance: 'gw-late', intervalStart: hour0 + (h - 48) * HOUR_MS, requests: 7 })
    stream.push(late)
    served += late.requests
  }
}

/** The stream as a log whose readAll hands batches of `batch` events (EventBatch, as a reader thread does). */
function logOf(events: TollgateEvent[]): EventLog {
  const bytes = events.map(encodeEvent)
  return {
    kind: 'embedded',
    partitions: [],
    lastSeq: async () => events.length,
    read: async (from: number, limit: number) => events.slice(from - 1, from - 1 + limit).map((event, i) => ({ seq: from + i, event })),
    async readAll(from: number, onBatch: (batch: EventBatch) => Promise<void> | void, opts: { to?: number; batch?: number } = {}) {
      const to = opts.to ?? events.length
      for (let first = from; first <= to; first += opts.batch ?? 256) {
        const batch = new EventBatch()
        for (let seq = first; seq <= Math.min(to, first + (opts.batch ?? 256) - 1); seq++) batch.push(seq, bytes[seq - 1]!)
        await onBatch(batch)
      }
      return to
    },
  } as unknown as EventLog
}

t.test('a history over 37 days of hours: one transaction, transactions of 97 and of 1,000 leave the state as before', async (t) => {
  const dir = tempDir(t, 'replay-spread-history')
  const results: Array<{ batch: number; digest: string; requests: number; keyHours: number; folded: number; accountHours: number }> = []
  for (const batch of [100_000, 97, 1_000]) {
    const store = StateStore.open(join(dir, `state-${batch}`))
    const { digest } = await replay(store, logOf(stream), { batch })
    const count = (db: string): number => [...store.entries()].filter((e) => e.db === db).length
    results.push({
      batch,
      digest,
      requests: usageTotals(store).requests,
      keyHours: count('keyUsageHours'),
      folded: count('keyUsageFolded'),
      accountHours: count('usageHourly'),
    })
    await store.close()
  }
  const [one] = results
  t.equal(one!.requests, served, 'every call counted')
  t.ok(one!.folded > 0, `key hours older than the window folded: ${one!.folded} folded rows`)
  t.ok(one!.keyHours > 0 && one!.keyHours < stream.length, `the window of key hours kept: ${one!.keyHours} rows`)
  t.ok(one!.accountHours > 0 && one!.accountHours < 9 * 24 * 2, `account hours of the last days only: ${one!.accountHours} rows`)
  // What the rows left before they skipped the fold and the drop (dc61977).
  t.equal(one!.digest, '53e10f5add1f46cd24ec87a72bc32e705544c565a6b115f44de8eb1809aca756', 'the state as before')
  for (const r of results.slice(1)) t.equal(r.digest, one!.digest, `transactions of ${r.batch}: the same digest`)
})
