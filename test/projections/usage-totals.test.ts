import { join } from 'node:path'
import t from 'tap'
import type { StoredEvent } from '../../src/events/types.js'
import { Projector } from '../../src/projections/projector.js'
import { open } from 'lmdb'
import { HOUR_MS, keyUsageHourKey, usageKey } from '../../src/store/records.js'
import { STATE_VERSION } from '../../src/store/state-store.js'
import { KEY_USAGE_NEWEST_HOUR } from '../../src/usage/usage-rows.js'
import { usageReport } from '../../src/usage/usage-report.js'
import { openLedger } from '../helpers/ledger.js'
import { accountWithKey, rateLimitedEvent, T0, tempDir, usageEvent } from './fixtures.js'
import { usageLedger } from '../../src/usage/usage-projection.js'
import { usageRows, usageTotals } from '../../src/usage/usage-queries.js'

const WALLET = '0x' + '12'.repeat(20)

const setup = (t: { teardown(fn: () => unknown): void }) => openLedger(t, { projector: { batch: 7 } })

t.test('usage events sum into totals per account, key, network and kind', async (t) => {
  const { log, store, projector } = await setup(t)
  const a = accountWithKey('acc_a', WALLET)
  const keyId = a.key.keyId
  await log.append(a.events)
  // 40 intervals on two instances and two node kinds: several transactions of 7 events.
  const events = []
  let expected = { requests: 0, errors: 0, bytesIn: 0, bytesOut: 0, units: 0 }
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
        // gw-a's events carry units; gw-b's are version 1 events (26 units a call).
        units: instance === 'gw-a' ? 300 * i : undefined,
      }
      events.push(usageEvent(u))
      expected = {
        requests: expected.requests + u.requests,
        errors: expected.errors + u.errors,
        bytesIn: expected.bytesIn + u.bytesIn,
        bytesOut: expected.bytesOut + u.bytesOut,
        units: expected.units + (u.units ?? u.requests * 26),
      }
    }
  }
  events.push(rateLimitedEvent('acc_a', keyId, T0, 5), rateLimitedEvent('acc_a', keyId, T0 + 10_000, 7))
  events.push(usageEvent({ accountId: 'acc_b', keyId: 'key_other', intervalStart: T0, requests: 1000 }))
  await log.append(events)
  await projector.catchUp()

  t.same(usageTotals(store, { accountId: 'acc_a' }), { ...expected, rateLimited: 12, notifications: 0 })
  t.equal(usageTotals(store, { accountId: 'acc_a', kind: 'archive' }).requests, expected.requests / 2)
  t.equal(usageTotals(store).requests, expected.requests + 1000, 'no filter: everything')
  t.equal(usageTotals(store, { accountId: 'acc' }).requests, 0, 'an account id prefix matches no other account')
  t.same(
    usageRows(store, { accountId: 'acc_a' }).map((r) => [r.keyId, r.network, r.kind]),
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
  t.equal(usageTotals(store).requests, 42)

  // A log past its dedup window (JetStream after a long outage) holds the same fact at two
  // seqs: the projection still counts it once.
  const last = await projector.apply([
    { seq: 2, event: u },
    { seq: 3, event: { ...u } },
  ])
  t.equal(last, 3)
  t.same(usageTotals(store), { requests: 42, errors: 0, bytesIn: 0, bytesOut: 9, rateLimited: 0, notifications: 0, units: 42 * 26 })
})

t.test('the checkpoint is in the batch transaction: the same batch applied twice changes nothing', async (t) => {
  const { log, store, projector } = await setup(t)
  await log.append([1, 2, 3].map((i) => usageEvent({ accountId: 'acc_a', keyId: 'key_1', intervalStart: T0 + i * 10_000, requests: i })))
  const batch: StoredEvent[] = await log.read(1, 10)
  await projector.apply(batch)
  const once = usageTotals(store)
  t.equal(once.requests, 6)
  await projector.apply(batch) // a crash between commit and ack: the log delivers it again
  await new Projector(store, log).apply(batch.slice(1)) // or another projector on the same store
  t.same(usageTotals(store), once)
  t.equal(store.checkpoint(), 3)
})

t.test('a write that throws commits nothing, checkpoint included', async (t) => {
  const { store } = await setup(t)
  t.throws(() =>
    store.write((w) => {
      usageLedger(w).rows.add({ accountId: 'acc_a', keyId: 'key_1', network: 'eth-1', kind: 'full', intervalStart: T0 }, { requests: 5 })
      w.setCheckpoint(9)
      throw new Error('projection failed mid-batch')
    }),
  )
  t.equal(usageTotals(store).requests, 0)
  t.equal(store.checkpoint(), 0)
})

t.test('a batch past a gap first reads the missing events from the log', async (t) => {
  const { log, store, projector } = await setup(t)
  await log.append([1, 2, 3, 4].map((i) => usageEvent({ accountId: 'acc_a', keyId: 'key_1', intervalStart: T0 + i * 10_000, requests: i })))
  await projector.apply(await log.read(3, 10)) // seq 3..4 while the checkpoint is 0
  t.equal(store.checkpoint(), 4)
  t.equal(usageTotals(store).requests, 10, 'seq 1 and 2 were not skipped')
})

t.test('rows written before units were counted get the units of their calls at 26, then add what events carry', async (t) => {
  const dir = tempDir(t, 'usage-before-units')
  // What the layout before units left: rows with calls and no units field.
  const env = open({ path: join(dir, 'state'), maxDbs: 32 })
  const hour = T0 - (T0 % HOUR_MS)
  await env.openDB('meta', { encoding: 'msgpack' }).put('version', STATE_VERSION)
  await env.openDB('meta', { encoding: 'msgpack' }).put('checkpoint', 3)
  await env.openDB('meta', { encoding: 'msgpack' }).put(KEY_USAGE_NEWEST_HOUR, hour)
  await env
    .openDB('usage', { encoding: 'msgpack' })
    .put(usageKey('acc_a', 'key_1', 'eth-1', 'full'), { requests: 5, errors: 0, bytesIn: 0, bytesOut: 0, rateLimited: 0, notifications: 0 })
  await env.openDB('keyUsageHours', { encoding: 'msgpack' }).put(keyUsageHourKey(hour, 'acc_a', 'key_1'), { requests: 5, errors: 0, bytesIn: 0, bytesOut: 0 })
  await env.close()
  const { log, store } = await openLedger(t, { dir })
  t.equal(usageTotals(store).units, 5 * 26, 'read: its 5 calls at 26')
  t.same(
    usageReport(store, {}).rows.map((r) => r.units),
    [5 * 26],
    'tollgate usage too',
  )
  const scope = { accountId: 'acc_a', keyId: 'key_1', network: 'eth-1', kind: 'full' as const }
  await log.append([1, 2, 3].map((i) => usageEvent({ ...scope, intervalStart: T0 - 100_000 + i, requests: 1 }))) // applied before
  await log.append([usageEvent({ ...scope, intervalStart: T0 + 10_000, requests: 2, units: 600 })])
  await new Projector(store, log).catchUp()
  t.same([usageTotals(store).requests, usageTotals(store).units], [7, 5 * 26 + 600], 'its old calls at 26, the new event as it says')
  t.same(
    usageReport(store, {}).rows.map((r) => [r.requests, r.units]),
    [[7, 5 * 26 + 600]],
  )
})
