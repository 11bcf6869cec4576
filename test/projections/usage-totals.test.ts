import { join } from 'node:path'
import t from 'tap'
import { EmbeddedLog } from '../../src/events/embedded-log.js'
import type { StoredEvent } from '../../src/events/types.js'
import { Projector } from '../../src/projections/projector.js'
import { StateStore } from '../../src/store/state-store.js'
import { accountWithKey, rateLimitedEvent, T0, tempDir, usageEvent } from './fixtures.js'

const WALLET = '0x' + '12'.repeat(20)

async function setup(t: { teardown(fn: () => unknown): void }) {
  const dir = tempDir(t, 'usage')
  const log = EmbeddedLog.open(join(dir, 'log'))
  const store = StateStore.open(join(dir, 'state'))
  t.teardown(async () => {
    await store.close()
    await log.close()
  })
  return { log, store, projector: new Projector(store, log, { batch: 7 }) }
}

t.test('usage events sum into totals per account, key, network and kind', async (t) => {
  const { log, store, projector } = await setup(t)
  const a = accountWithKey('acc_a', WALLET)
  const keyId = a.key.keyId
  await log.append(a.events)
  // 40 intervals on two instances and two node kinds: several transactions of 7 events.
  const events = []
  let expected = { requests: 0, errors: 0, bytesIn: 0, bytesOut: 0 }
  for (let i = 0; i < 20; i++) {
    for (const [instance, kind] of [
      ['gw-a', 'full'],
      ['gw-b', 'archive'],
    ] as const) {
      const u = {
        accountId: 'acc_a',
        keyId,
        instance,
        kind,
        intervalStart: T0 + i * 10_000,
        requests: 10 + i,
        errors: i % 3,
        bytesIn: 100 * i,
        bytesOut: 1000 + i,
      }
      events.push(usageEvent(u))
      expected = {
        requests: expected.requests + u.requests,
        errors: expected.errors + u.errors,
        bytesIn: expected.bytesIn + u.bytesIn,
        bytesOut: expected.bytesOut + u.bytesOut,
      }
    }
  }
  events.push(rateLimitedEvent('acc_a', keyId, T0, 5), rateLimitedEvent('acc_a', keyId, T0 + 10_000, 7))
  events.push(usageEvent({ accountId: 'acc_b', keyId: 'key_other', intervalStart: T0, requests: 1000 }))
  await log.append(events)
  await projector.catchUp()

  t.same(store.usageTotals({ accountId: 'acc_a' }), { ...expected, rateLimited: 12, notifications: 0 })
  t.equal(store.usageTotals({ accountId: 'acc_a', kind: 'archive' }).requests, expected.requests / 2)
  t.equal(store.usageTotals().requests, expected.requests + 1000, 'no filter: everything')
  t.equal(store.usageTotals({ accountId: 'acc' }).requests, 0, 'an account id prefix matches no other account')
  t.same(
    store.usageRows({ accountId: 'acc_a' }).map((r) => [r.keyId, r.network, r.kind]),
    [
      [keyId, 'eth-1', 'archive'],
      [keyId, 'eth-1', 'full'],
    ],
  )
  t.equal(store.checkpoint(), 3 + 43)
})

t.test('a duplicate UsageRecorded (same id) is counted once, whether the log dedups it or holds it twice', async (t) => {
  const { log, store, projector } = await setup(t)
  const u = usageEvent({ accountId: 'acc_a', keyId: 'key_1', intervalStart: T0, requests: 42, bytesOut: 9 })
  await log.append([u])
  await log.append([u]) // re-sent after a failure: the log stores it once
  await projector.catchUp()
  t.equal(await log.lastSeq(), 1)
  t.equal(store.usageTotals().requests, 42)

  // A log past its dedup window (JetStream after a long outage) holds the same fact at two
  // seqs: the projection still counts it once.
  const last = await projector.apply([
    { seq: 2, event: u },
    { seq: 3, event: { ...u } },
  ])
  t.equal(last, 3)
  t.same(store.usageTotals(), { requests: 42, errors: 0, bytesIn: 0, bytesOut: 9, rateLimited: 0, notifications: 0 })
})

t.test('the checkpoint is in the batch transaction: the same batch applied twice changes nothing', async (t) => {
  const { log, store, projector } = await setup(t)
  await log.append([1, 2, 3].map((i) => usageEvent({ accountId: 'acc_a', keyId: 'key_1', intervalStart: T0 + i * 10_000, requests: i })))
  const batch: StoredEvent[] = await log.read(1, 10)
  await projector.apply(batch)
  const once = store.usageTotals()
  t.equal(once.requests, 6)
  await projector.apply(batch) // a crash between commit and ack: the log delivers it again
  await new Projector(store, log).apply(batch.slice(1)) // or another projector on the same store
  t.same(store.usageTotals(), once)
  t.equal(store.checkpoint(), 3)
})

t.test('a write that throws commits nothing, checkpoint included', async (t) => {
  const { store } = await setup(t)
  t.throws(() =>
    store.write((w) => {
      w.addUsage({ accountId: 'acc_a', keyId: 'key_1', network: 'eth-1', kind: 'full', intervalStart: T0 }, { requests: 5 })
      w.setCheckpoint(9)
      throw new Error('projection failed mid-batch')
    }),
  )
  t.equal(store.usageTotals().requests, 0)
  t.equal(store.checkpoint(), 0)
})

t.test('a batch past a gap first reads the missing events from the log', async (t) => {
  const { log, store, projector } = await setup(t)
  await log.append([1, 2, 3, 4].map((i) => usageEvent({ accountId: 'acc_a', keyId: 'key_1', intervalStart: T0 + i * 10_000, requests: i })))
  await projector.apply(await log.read(3, 10)) // seq 3..4 while the checkpoint is 0
  t.equal(store.checkpoint(), 4)
  t.equal(store.usageTotals().requests, 10, 'seq 1 and 2 were not skipped')
})
