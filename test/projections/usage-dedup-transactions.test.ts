import { join } from 'node:path'
import t from 'tap'
import { encodeEvent } from '../../src/events/codec.js'
import { EventBatch } from '../../src/events/event-batch.js'
import type { EventLog } from '../../src/events/log.js'
import type { TollgateEvent } from '../../src/events/types.js'
import { replay } from '../../src/projections/replay.js'
import { StateStore } from '../../src/store/state-store.js'
import { rateLimitedEvent, T0, tempDir, usageEvent } from './fixtures.js'
import { usageTotals } from '../../src/usage/usage-queries.js'

/*
 * The usage dedup keeps the ids a transaction adds in memory, by minute, and folds them into
 * their producers' watermarks as the window moves, without writing them (UsageDedup's fresh ids):
 * a replay's large transactions take that path for nearly every event, small ones (a live
 * gateway's) the path through LMDB. Both must count, keep and drop exactly the same: the same
 * stream with duplicates (re-sent within the id window and behind it) and late intervals, replayed
 * in one transaction, in transactions of 7 events and of one, leaves the same state.
 */

const STEP = 5_000
const start = T0 - (T0 % 60_000)
const producers = ['gw-a', 'gw-b', 'gw-c'].flatMap((instance) => ['key_a', 'key_b'].map((keyId) => ({ instance, keyId })))
const stream: TollgateEvent[] = []
let served = 0
const pending: Array<{ at: number; event: TollgateEvent }> = []
for (let i = 0; i < 12 * 12; i++) {
  const intervalStart = start + i * STEP
  for (const [p, { instance, keyId }] of producers.entries()) {
    const event = usageEvent({ accountId: 'acc_a', keyId, instance, intervalStart, requests: 1 + p, units: 10 + i })
    if ((i + p) % 11 === 3) {
      pending.push({ at: i + 4, event }) // 20 s late (inside the id window)
    } else stream.push(event)
    served += event.requests
    if ((i + p) % 7 === 0) pending.push({ at: i + 2, event }) // sent again 10 s later
    if ((i + p) % 23 === 0) pending.push({ at: i + 50, event }) // and 4 minutes later (behind the window)
  }
  if (i % 13 === 0) stream.push(rateLimitedEvent('acc_a', 'key_a', intervalStart, 2))
  for (const p of pending.filter((p) => p.at === i)) stream.push(p.event)
}
for (const p of pending.filter((p) => p.at >= 12 * 12)) stream.push(p.event)

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

t.test('one transaction, transactions of 7 events and of one leave the same state', async (t) => {
  const dir = tempDir(t, 'usage-dedup-transactions')
  const results: Array<{ batch: number; digest: string; requests: number; ids: number; producers: number }> = []
  for (const batch of [100_000, 7, 1]) {
    const store = StateStore.open(join(dir, `state-${batch}`))
    const { digest } = await replay(store, logOf(stream), { batch })
    const count = (db: string): number => [...store.entries()].filter((e) => e.db === db).length
    results.push({ batch, digest, requests: usageTotals(store).requests, ids: count('usageEvents'), producers: count('usageProducers') })
    await store.close()
  }
  t.equal(results[0]!.requests, served, 'every event counted once, duplicates not')
  t.ok(results[0]!.ids > 0, `the ids of the last minutes kept: ${results[0]!.ids}`)
  t.equal(results[0]!.producers, producers.length + 1, 'a watermark per producer (six of usage, one of rate limits)')
  // What the dedup kept in memory by minute and per producer before (6581cb1) left: a change
  // of how it keeps them must not change what it counts or writes.
  t.equal(results[0]!.digest, 'f40a7cff0a558601c83d376ae77ff2c9494306c721238fdeedc904f83ec2ef70', 'the state as before')
  for (const r of results.slice(1)) t.equal(r.digest, results[0]!.digest, `transactions of ${r.batch}: the same digest`)
})
