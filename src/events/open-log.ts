import { join } from 'node:path'
import type { EventsConfig } from '../config/types.js'
import { EmbeddedLog } from './embedded-log.js'
import { JetStreamLog } from './jetstream-log.js'
import type { EventLog } from './log.js'

/**
 * The event log the configuration asks for: JetStream when `events.nats` is set, else the
 * embedded log in `<dataDir>/log`.
 * @example
 * const log = await openEventLog(config.events, config.dataDir)
 */
export async function openEventLog(events: EventsConfig, dataDir: string): Promise<EventLog> {
  if (events.nats !== undefined) {
    return JetStreamLog.connect({
      servers: events.nats,
      stream: events.stream,
      subjectPrefix: events.subjectPrefix,
      replicas: events.replicas,
      name: 'tollgate',
    })
  }
  return EmbeddedLog.open(join(dataDir, 'log'))
}
