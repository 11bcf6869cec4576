import { join } from 'node:path'
import t from 'tap'
import { EmbeddedLog } from '../../src/events/embedded-log.js'
import { Projector } from '../../src/projections/projector.js'
import { StateStore } from '../../src/store/state-store.js'
import { waitFor, within } from '../helpers/eventually.js'
import { accountWithKey, T0, tempDir, usageEvent } from './fixtures.js'

// A following projector holds a batch of usage alone until usageCommitMs after its last commit
// (every instance projects every instance's usage: one transaction per flush of each was most of
// what an instance that serves nothing spent). What must not wait: anything else, and a stop.
// The spacing here is far longer than any bound the test waits, so a wait shows as a failure.
const SPACING_MS = 120_000
const BOUND_MS = 15_000

t.test('a batch with a key in it is committed at once; a stop ends the wait of a usage batch and applies it', async (t) => {
  const dir = tempDir(t, 'spacing')
  const log = EmbeddedLog.open(join(dir, 'log'))
  const store = StateStore.open(join(dir, 'state'))
  const projector = new Projector(store, log, { usageCommitMs: SPACING_MS })
  t.teardown(async () => {
    await projector.stop()
    store.close()
    await log.close()
  })
  projector.start()
  const first = accountWithKey('acc_1', `0x${'1'.repeat(40)}`)
  await log.append(first.events)
  await waitFor(() => projector.applied() === first.events.length, 'the account and its key')

  // Usage right after a commit: held.
  await log.append([usageEvent({ accountId: 'acc_1', keyId: first.key.keyId, intervalStart: T0, requests: 4 })])
  const usageSeq = first.events.length + 1
  await waitFor(() => projector.holding() === 1, 'the usage batch to be held')
  t.equal(projector.applied(), first.events.length, 'the usage is not applied while it is held')
  const stopping = projector.stop()
  const stoppedIn = await within(BOUND_MS, async () => {
    await stopping
    return true
  })
  t.not(stoppedIn, undefined, `stop() ends the wait of a usage batch (within ${BOUND_MS} ms; the spacing is ${SPACING_MS} ms)`)
  t.equal(projector.applied(), usageSeq, 'the usage batch held at the stop is applied, not dropped')
  t.equal(projector.holding(), 0, 'nothing is held once stopped')

  // Started again: a usage batch is held (its commit came just now) but a key's batch is not.
  projector.start()
  const second = accountWithKey('acc_2', `0x${'2'.repeat(40)}`)
  await log.append(second.events)
  const appliedIn = await within(BOUND_MS, () => projector.applied() === usageSeq + second.events.length)
  t.not(appliedIn, undefined, `an account and its key are committed at once after a commit (within ${BOUND_MS} ms; the spacing is ${SPACING_MS} ms)`)
  t.ok(store.table('keys').get(second.key.keyHash) !== undefined, 'the new key is in the store')
})
