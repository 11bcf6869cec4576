import type { Logger } from 'pino'
import { loadConfig } from '../config/load.js'
import type { Config } from '../config/types.js'
import type { ReloadOutcome } from '../main/reload.js'

/**
 * Until the gateway serves, a SIGHUP is noted and dropped: Node's default for it is to exit at
 * once, which would kill a starting gateway without a word (and a reload of the config the
 * gateway is starting with has nothing to change).
 */
export function holdReloadsWhileStarting(logger: Logger): () => void {
  const early = (): void => logger.warn('reload asked while the gateway is starting: ignored (it starts with the config file as it is now)')
  process.on('SIGHUP', early)
  return () => process.off('SIGHUP', early)
}

/**
 * On each SIGHUP, read `configPath` again and hand it to `apply` (a gateway's reload, or the
 * supervisor passing it on), logging the outcome on one line: `config reloaded` with what changed,
 * or `reload refused` with the reason, the running config kept, or `reload failed at <part>` when
 * a part of the gateway threw part way (the parts before it hold, those after it were not
 * applied). A config that fails its checks is refused here with the checker's message (the field
 * and what is wrong with it).
 * @example
 * onReloadSignal(logger, 'tollgate.json', (next) => gateway.reload(next))
 */
export function onReloadSignal(logger: Logger, configPath: string, apply: (next: Config) => ReloadOutcome | undefined): void {
  process.on('SIGHUP', () => {
    let next: Config
    try {
      next = loadConfig(configPath)
    } catch (err) {
      logger.error({ reason: 'invalid', error: (err as Error).message }, 'reload refused: the config file does not pass its checks; the running config stays')
      return
    }
    let outcome: ReloadOutcome | undefined
    try {
      outcome = apply(next)
    } catch (err) {
      // Thrown out of a signal handler, it would end the process: the very thing a reload must not do.
      logger.error({ err }, 'reload failed part way: what was applied before the error stays; fix the file and reload again, or restart')
      return
    }
    if (outcome === undefined) return
    if (outcome.applied) {
      const nothing = Object.keys(outcome.changes).length === 0
      logger.info({ changes: outcome.changes }, nothing ? 'config reloaded: nothing changed' : 'config reloaded')
    } else if ('restart' in outcome) {
      logger.error(
        { reason: 'restart', fields: outcome.restart },
        `reload refused: ${outcome.restart.join(', ')} cannot change while the gateway runs (restart it for that); the running config stays, nothing of the file was applied`,
      )
    } else if ('failed' in outcome) {
      const { part, applied, notApplied } = outcome.failed
      const cause = outcome.failed.cause instanceof Error ? outcome.failed.cause.message : String(outcome.failed.cause)
      logger.error(
        { reason: 'part-failed', part, applied, notApplied, error: cause },
        `reload failed at ${part}: ${cause}; the parts before it hold, those after it were not applied (the gateway serves on with both); fix the file and reload again (every part is applied again), or restart`,
      )
    } else {
      logger.error({ reason: 'error', error: outcome.error.message }, 'reload refused: the running config stays')
    }
  })
}
