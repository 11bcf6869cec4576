import { join } from 'node:path'
import type { EventsConfig as EventsSection } from '../config/types.js'
import { EmbeddedLog } from './embedded-log.js'
import { JetStreamLog } from './jetstream-log.js'
import { ReaderThread, readerThreadOptions } from './read-in-thread.js'
import type { EventLogUnavailable } from './errors.js'
import type { EventLog } from './log.js'

/** What opening the log needs of the config's `events` section. */
type EventsConfig = Omit<EventsSection, 'outageLogEveryMs' | 'partitions'> & Partial<Pick<EventsSection, 'partitions'>>

export interface OpenLogOptions {
  /**
   * Open the JetStream log even when NATS cannot be reached now (it connects in the background),
   * telling this function why; absent: reject with EventLogUnavailable (the command line's way).
   */
  whileNatsIsDown?: (err: EventLogUnavailable) => void
  /** A reader thread started already on the configured stream (see JetStreamLogOptions.readerThread). */
  readerThread?: ReaderThread
}

/** The connection name of the log (and, with " reader", of its reader thread). */
const LOG_NAME = 'tollgate'

/**
 * A reader thread for the JetStream log the configuration asks for (undefined: the embedded log),
 * started now: it connects while the caller goes on (see ReaderThread). Pass it to openEventLog.
 */
export function startReaderThread(events: EventsConfig): ReaderThread | undefined {
  if (events.nats === undefined) return undefined
  return ReaderThread.start(readerThreadOptions({ servers: events.nats, stream: events.stream, name: LOG_NAME }))
}

/**
 * The event log the configuration asks for: JetStream when `events.nats` is set, else the
 * embedded log in `<dataDir>/log` (one file, one order: events.partitions > 1 is refused there
 * when the configuration is loaded).
 * @example
 * const log = await openEventLog(config.events, config.dataDir)
 */
export async function openEventLog(events: EventsConfig, dataDir: string, opts: OpenLogOptions = {}): Promise<EventLog> {
  if (events.nats !== undefined) {
    const jsOpts = {
      servers: events.nats,
      stream: events.stream,
      subjectPrefix: events.subjectPrefix,
      replicas: events.replicas,
      partitions: events.partitions,
      name: LOG_NAME,
      readerThread: opts.readerThread,
    }
    return opts.whileNatsIsDown ? JetStreamLog.open(jsOpts, opts.whileNatsIsDown) : JetStreamLog.connect(jsOpts)
  }
  return EmbeddedLog.open(join(dataDir, 'log'))
}
