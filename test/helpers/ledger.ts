import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Clock } from '../../actors/runtime/clock.js'
import { systemClock } from '../../actors/runtime/clock.js'
import type { AccountCommandDeps } from '../../src/accounts/commands.js'
import { EmbeddedLog } from '../../src/events/embedded-log.js'
import type { EventLog } from '../../src/events/log.js'
import { KeyCipher } from '../../src/keys/key-cipher.js'
import { loadPlanCatalog } from '../../src/plans/catalog.js'
import { Projector, type ProjectorOptions } from '../../src/projections/projector.js'
import { StateStore } from '../../src/store/state-store.js'
import { TEST_SECRET } from './gateway.js'

/**
 * An event log with a state store and its projector, in a folder (`log/` and `state/`): what the
 * projection tests start from, and what the account commands use (with a plan catalog, a key
 * cipher and a clock). Several ledgers may share one log (two "instances" of the gateway).
 */
export interface Ledger extends AccountCommandDeps {
  log: EventLog
  store: StateStore
  projector: Projector
  /** The folder of the log and the store. */
  dir: string
}

export interface LedgerOptions {
  /** A log of another ledger to share (closed by its owner); default an embedded log of its own. */
  log?: EventLog
  clock?: Clock
  /** The projector's options (its batch size, onApplied). */
  projector?: ProjectorOptions
  /** A folder the test made (a store of an older layout already in it) instead of a new temporary one; the test removes it. */
  dir?: string
}

/**
 * Open a ledger; at teardown the projector is stopped and the log (unless shared) and the store
 * are closed, then the temporary folder is removed.
 * @example
 * const { log, store, projector } = await openLedger(t, { projector: { batch: 7 } })
 * await log.append(events)
 * await projector.catchUp()
 */
export async function openLedger(t: { teardown(fn: () => unknown): void }, opts: LedgerOptions = {}): Promise<Ledger> {
  const dir = opts.dir ?? (await mkdtemp(join(tmpdir(), 'tollgate-ledger-')))
  const log = opts.log ?? EmbeddedLog.open(join(dir, 'log'))
  const store = StateStore.open(join(dir, 'state'))
  const projector = new Projector(store, log, opts.projector)
  t.teardown(async () => {
    await projector.stop()
    if (opts.log === undefined) await log.close()
    await store.close()
    if (opts.dir === undefined) await rm(dir, { recursive: true, force: true })
  })
  return { log, store, projector, dir, catalog: loadPlanCatalog('default'), cipher: KeyCipher.fromSecret(TEST_SECRET), clock: opts.clock ?? systemClock }
}
