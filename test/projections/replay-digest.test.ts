import { rmSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { EmbeddedLog } from '../../src/events/embedded-log.js'
import type { KeyRevoked, TollgateEvent } from '../../src/events/types.js'
import { Projector } from '../../src/projections/projector.js'
import { ProjectionAheadOfLog } from '../../src/projections/errors.js'
import { replay, stateDigest } from '../../src/projections/replay.js'
import { StateStore } from '../../src/store/state-store.js'
import { openLedger } from '../helpers/ledger.js'
import { accountWithKey, ev, rateLimitedEvent, T0, tempDir, usageEvent } from './fixtures.js'
import { usageTotals } from '../../src/usage/usage-queries.js'
import { until } from '../helpers/eventually.js'

/** Three accounts, a regenerated key, usage from two instances: appended in `chunks` appends. */
function history(): TollgateEvent[][] {
  const chunks: TollgateEvent[][] = []
  for (let n = 0; n < 3; n++) {
    const accountId = `acc_${n}`
    const a = accountWithKey(accountId, '0x' + String(n).repeat(40), T0 + n)
    const b = accountWithKey(accountId, '0x' + String(n).repeat(40), T0 + n + 1)
    const usage = [] as TollgateEvent[]
    for (let i = 0; i < 30; i++) {
      usage.push(
        usageEvent({ accountId, keyId: a.key.keyId, instance: i % 2 ? 'gw-a' : 'gw-b', intervalStart: T0 + i * 10_000, requests: i + n, bytesOut: 7 * i }),
      )
    }
    chunks.push(a.events, usage.slice(0, 15), [
      b.events[2]!,
      ev<KeyRevoked>({ type: 'KeyRevoked', accountId, keyId: a.key.keyId, reason: 'regenerated', effectiveAt: T0 + 5 }, T0 + 5),
    ])
    chunks.push(usage.slice(15), [rateLimitedEvent(accountId, b.key.keyId, T0, 3)])
  }
  return chunks
}

/** Wait (bounded) until the store has applied the log up to its last seq. */
async function caughtUp(store: StateStore, log: EmbeddedLog): Promise<void> {
  const target = await log.lastSeq()
  // 10 s is an outer bound, so that a projection that never catches up fails instead of hanging.
  if (!(await until(() => store.checkpoint() >= target))) throw new Error(`projection stuck at ${store.checkpoint()} of ${target}`)
}

t.test('replay after deleting the state folder gives the same digest as live projection', async (t) => {
  const dir = tempDir(t, 'replay')
  const log = EmbeddedLog.open(join(dir, 'log'))
  t.teardown(() => log.close())
  const statePath = join(dir, 'state')
  const store = StateStore.open(statePath)
  const projector = new Projector(store, log, { batch: 10 })
  projector.start() // live: applied as appended, in whatever batches the follower makes
  for (const chunk of history()) await log.append(chunk)
  await caughtUp(store, log)
  await projector.stop()
  const live = stateDigest(store)
  t.ok(usageTotals(store).requests > 0, 'the digest covers real state')
  await store.close()

  rmSync(statePath, { recursive: true, force: true })
  const result = await replay(statePath, log)
  t.same(result, { events: await log.lastSeq(), digest: live })

  // Replay over an existing store wipes it first (usage is not counted twice).
  const again = await replay(statePath, log, { batch: 3 })
  t.equal(again.digest, live)
})

t.test('the digest tells different states apart', async (t) => {
  const { log, store } = await openLedger(t)
  const empty = stateDigest(store)
  await log.append([usageEvent({ accountId: 'acc_a', keyId: 'key_1', intervalStart: T0, requests: 1 })])
  await new Projector(store, log).catchUp()
  const one = stateDigest(store)
  t.not(one, empty)
  await log.append([usageEvent({ accountId: 'acc_a', keyId: 'key_1', intervalStart: T0 + 10_000, requests: 1 })])
  await new Projector(store, log).catchUp()
  t.not(stateDigest(store), one)
})

t.test('two projectors on one store give the same digest as one projector', async (t) => {
  const dir = tempDir(t, 'two')
  const log = EmbeddedLog.open(join(dir, 'log'))
  t.teardown(() => log.close())
  // Two handles on one folder, as the CLI and a gateway process have.
  const shared1 = StateStore.open(join(dir, 'shared'))
  const shared2 = StateStore.open(join(dir, 'shared'))
  const single = StateStore.open(join(dir, 'single'))
  const p1 = new Projector(shared1, log, { batch: 4 })
  const p2 = new Projector(shared2, log, { batch: 5 })
  p1.start()
  p2.start()
  for (const chunk of history()) {
    await log.append(chunk)
    if (chunk.length % 2 === 0) await p2.catchUp() // a third writer racing the followers
  }
  await caughtUp(shared1, log)
  await Promise.all([p1.stop(), p2.stop()])
  await new Projector(single, log).catchUp()
  t.equal(stateDigest(shared1), stateDigest(single))
  t.equal(stateDigest(shared2), stateDigest(single))
  await Promise.all([shared1.close(), shared2.close(), single.close()])
})

t.test('a store built from another log is refused, not silently skipped', async (t) => {
  const dir = tempDir(t, 'ahead')
  const logA = EmbeddedLog.open(join(dir, 'log-a'))
  const logB = EmbeddedLog.open(join(dir, 'log-b'))
  const store = StateStore.open(join(dir, 'state'))
  t.teardown(async () => {
    await store.close()
    await logA.close()
    await logB.close()
  })
  await logA.append(accountWithKey('acc_1', '0x' + '1'.repeat(40)).events)
  await new Projector(store, logA).catchUp()
  await logB.append([usageEvent({ accountId: 'acc_1', keyId: 'k', intervalStart: T0, requests: 1 })])
  const refused = await new Projector(store, logB).catchUp().then(
    () => undefined,
    (e: unknown) => e,
  )
  t.ok(refused instanceof ProjectionAheadOfLog, 'rejects with ProjectionAheadOfLog')
  t.match((refused as Error).message, /seq 3 .* ends at seq 1.*tollgate replay/)
})
