import { join } from 'node:path'
import type { Logger } from 'pino'
import type { Config } from '../config/types.js'
import type { EventLog } from '../events/log.js'
import { EventLogUnavailable } from '../events/errors.js'
import { openEventLog } from '../events/open-log.js'
import { eventLogOutage, type EventLogParts, type OutageLog } from '../events/outage-log.js'
import { Outbox } from '../events/outbox.js'
import { StateStore } from '../store/state-store.js'
import type { Closers } from './closers.js'

/** The gateway's events and state: the log, the projections' store, the outbox, and the outage of NATS as one. */
export interface EventsAndState {
  readonly store: StateStore
  readonly log: EventLog
  readonly outbox: Outbox
  /** Where every part that meets an outage of NATS reports it (logged once, then its state every outageLogEveryMs). */
  readonly outage: OutageLog
}

/**
 * Open the events and state, each registered with `closers` as soon as it is open: the store of the
 * projections (in `ownDir`, a worker's own), the event log (shared, in `config.dataDir` or NATS),
 * the outbox that feeds it. On close the outbox is flushed with what is left of the drain:
 * `drainDeadline()` is when the drain began plus shutdownMs (infinite before a drain), and it gets
 * at least a second, since usage is what the drain is for.
 */
export async function openEventsAndState(
  config: Pick<Config, 'events' | 'dataDir' | 'shutdownMs'>,
  ownDir: string,
  logger: Logger,
  closers: Closers,
  drainDeadline: () => number,
): Promise<EventsAndState> {
  const store = closers.add('state store', StateStore.open(join(ownDir, 'state')), (s) => s.close())
  const parts: EventLogParts = {}
  const outage = closers.add('outage log', eventLogOutage(logger, parts, config.events.outageLogEveryMs), (o) => o.close())
  const log = closers.add('event log', await openEventLog(config.events, config.dataDir, { whileNatsIsDown: (err) => outage.report(err) }), (l) => l.close())
  parts.log = log
  const outbox = closers.add(
    'outbox',
    Outbox.open(join(ownDir, 'outbox'), log, {
      onError: (err) => (err instanceof EventLogUnavailable ? outage.report(err) : logger.warn({ err: String(err) }, 'outbox error')),
      // After a disruption the last acknowledged events are sent again; the log drops what it holds.
      onResent: (count) =>
        logger.info({ count }, 'events acknowledged in the last minutes sent again after a disruption of the event log (duplicates are dropped by id)'),
    }),
    async (o) => {
      try {
        await o.flush(Math.max(1_000, Math.min(drainDeadline(), Date.now() + config.shutdownMs) - Date.now()))
      } catch (err) {
        logger.warn({ err: String(err), pending: o.pending() }, 'events left in the outbox; the next start sends them')
      }
      await o.close()
    },
  )
  parts.outbox = outbox
  return { store, log, outbox, outage }
}
