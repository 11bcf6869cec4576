import { join } from 'node:path'
import t, { type Test } from 'tap'
import { EmbeddedLog } from '../../src/events/embedded-log.js'
import { Projector } from '../../src/projections/projector.js'
import { StateStore } from '../../src/store/state-store.js'
import { waitFor, within } from '../helpers/eventually.js'
import { accountWithKey, T0, tempDir, usageEvent } from './fixtures.js'

// A following projector holds batches of usage alone until usageCommitMs after its last commit
// (src/projections/usage-hold.ts: every instance projects every instance's usage, and a transaction
// per flush of each was most of what an instance that serves nothing spent). What must not wait:
// anything else, and a stop. The hold here is far longer than any bound the test waits, so a
// wait shows as a failure.
const HOLD_MS = 120_000
const BOUND_MS = 15_000

/** A projector following an embedded log that holds one account with a key, applied. */
async function following(t: Test, opts: { batch?: number } = {}) {
  const dir = tempDir(t, 'hold')
  const log = EmbeddedLog.open(join(dir, 'log'))
  const store = StateStore.open(join(dir, 'state'))
  const projector = new Projector(store, log, { usageCommitMs: HOLD_MS, ...opts })
  t.teardown(async () => {
    await projector.stop()
    store.close()
    await log.close()
  })
  projector.start()
  const first = accountWithKey('acc_1', `0x${'1'.repeat(40)}`)
  await log.append(first.events)
  await waitFor(() => projector.applied() === first.events.length, 'the account and its key')
  return { log, store, projector, first }
}

t.test('usage is held; a key that follows it is applied at once, with it; a stop commits what is held', async (t) => {
  const { log, store, projector, first } = await following(t)

  // Usage right after a commit: held, not applied.
  const usage = (requests: number) => usageEvent({ accountId: 'acc_1', keyId: first.key.keyId, intervalStart: T0 + requests * 1000, requests })
  await log.append([usage(1)])
  await waitFor(() => projector.holding() === 1, 'the usage to be held')
  t.equal(projector.applied(), first.events.length, 'held usage is not applied')

  // A key after it: applied at once, and the usage before it in the same go (the log's order).
  const second = accountWithKey('acc_2', `0x${'2'.repeat(40)}`)
  await log.append(second.events)
  const total = first.events.length + 1 + second.events.length
  const appliedIn = await within(BOUND_MS, () => projector.applied() === total)
  t.not(appliedIn, undefined, `an account and its key are applied at once behind held usage (within ${BOUND_MS} ms; the hold is ${HOLD_MS} ms)`)
  t.equal(projector.holding(), 0, 'the held usage went with them')
  t.ok(store.table('keys').get(second.key.keyHash) !== undefined, 'the new key is in the store')

  // More usage, held again; the stop commits it and does not wait for the hold.
  await log.append([usage(2), usage(3)])
  await waitFor(() => projector.holding() === 2, 'the new usage to be held')
  const stopping = projector.stop()
  const stoppedIn = await within(BOUND_MS, async () => {
    await stopping
    return true
  })
  t.not(stoppedIn, undefined, `stop() does not wait for the hold (within ${BOUND_MS} ms; the hold is ${HOLD_MS} ms)`)
  t.equal(projector.applied(), total + 2, 'what was held at the stop is applied, not dropped')
  t.equal(projector.holding(), 0, 'nothing is held once stopped')
})

t.test('usage past the hold limit is applied at once', async (t) => {
  // A batch of 2 events a transaction: the hold takes 8 transactions' worth, 16 events.
  const { log, projector, first } = await following(t, { batch: 2 })
  const events = Array.from({ length: 20 }, (_, i) => usageEvent({ accountId: 'acc_1', keyId: first.key.keyId, intervalStart: T0 + i * 1000, requests: i + 1 }))
  await log.append(events)
  const appliedIn = await within(BOUND_MS, () => projector.applied() === first.events.length + 20)
  t.not(appliedIn, undefined, `20 events of usage, past the 16 a hold takes, are applied at once (within ${BOUND_MS} ms)`)
})
