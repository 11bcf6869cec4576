import { join } from 'node:path'
import type { EventsConfig } from '../config/types.js'
import { EmbeddedLog } from './embedded-log.js'
import { JetStreamLog } from './jetstream-log.js'
import type { EventLog, EventLogUnavailable } from './log.js'

export interface OpenLogOptions {
  /**
   * Open the JetStream log even when NATS cannot be reached now (it connects in the background),
   * telling this function why; absent: reject with EventLogUnavailable (the command line's way).
   */
  whileNatsIsDown?: (err: EventLogUnavailable) => void
}

/**
 * The event log the configuration asks for: JetStream when `events.nats` is set, else the
 * embedded log in `<dataDir>/log`.
 * @example
 * const log = await openEventLog(config.events, config.dataDir)
 */
export async function openEventLog(events: EventsConfig, dataDir: string, opts: OpenLogOptions = {}): Promise<EventLog> {
  if (events.nats !== undefined) {
    const jsOpts = { servers: events.nats, stream: events.stream, subjectPrefix: events.subjectPrefix, replicas: events.replicas, name: 'tollgate' }
    return opts.whileNatsIsDown ? JetStreamLog.open(jsOpts, opts.whileNatsIsDown) : JetStreamLog.connect(jsOpts)
  }
  return EmbeddedLog.open(join(dataDir, 'log'))
}
