import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { loadConfig } from '../config/load.js'
import type { Config } from '../config/types.js'
import { openEventLog } from '../events/open-log.js'
import type { EventLog } from '../events/log.js'
import { StateStore } from '../store/state-store.js'
import { Projector } from '../projections/projector.js'
import { loadPlanCatalog, type PlanCatalog } from '../plans/catalog.js'

/** What the account and event commands share: the config, the event log and the caught-up projections. */
export interface CommandContext {
  config: Config
  log: EventLog
  store: StateStore
  projector: Projector
  catalog: PlanCatalog
  close(): Promise<void>
}

export async function openCommandContext(configPath: string, opts: { catchUp?: boolean } = {}): Promise<CommandContext> {
  const config = loadConfig(configPath)
  return openContextFor(config, opts)
}

export async function openContextFor(config: Config, opts: { catchUp?: boolean } = {}): Promise<CommandContext> {
  mkdirSync(config.dataDir, { recursive: true })
  const catalog = loadPlanCatalog(config.plans.catalog)
  const log = await openEventLog(config.events, config.dataDir)
  // What is open is closed before an error goes on: an open NATS connection kept the process
  // alive, and a command that printed its error hung instead of exiting.
  let store: StateStore
  try {
    store = StateStore.open(join(config.dataDir, 'state'))
  } catch (err) {
    await log.close().catch(() => undefined)
    throw err
  }
  let projector: Projector
  try {
    projector = new Projector(store, log, { usage: config.usage.project })
  } catch (err) {
    store.close()
    await log.close().catch(() => undefined)
    throw err
  }
  const context: CommandContext = {
    config,
    log,
    store,
    projector,
    catalog,
    async close() {
      await projector.stop()
      await log.close()
      store.close()
    },
  }
  if (opts.catchUp !== false) {
    try {
      await projector.catchUp()
    } catch (err) {
      await context.close().catch(() => undefined)
      throw err
    }
  }
  return context
}
