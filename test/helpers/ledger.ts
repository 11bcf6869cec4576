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
import { Projector } from '../../src/projections/projector.js'
import { StateStore } from '../../src/store/state-store.js'
import { TEST_SECRET } from './gateway.js'

/**
 * An event log with a state store and its projector, as the account commands use them, in a
 * temporary folder. Several ledgers may share one log (two "instances" of the gateway).
 */
export interface Ledger extends AccountCommandDeps {
  log: EventLog
  store: StateStore
  projector: Projector
}

export async function openLedger(t: { teardown(fn: () => unknown): void }, opts: { log?: EventLog; clock?: Clock } = {}): Promise<Ledger> {
  const dir = await mkdtemp(join(tmpdir(), 'tollgate-ledger-'))
  const log = opts.log ?? EmbeddedLog.open(join(dir, 'log'))
  const store = StateStore.open(join(dir, 'state'))
  const projector = new Projector(store, log)
  t.teardown(async () => {
    await projector.stop()
    if (opts.log === undefined) await log.close()
    await store.close()
    await rm(dir, { recursive: true, force: true })
  })
  return { log, store, projector, catalog: loadPlanCatalog('default'), cipher: KeyCipher.fromSecret(TEST_SECRET), clock: opts.clock ?? systemClock }
}
