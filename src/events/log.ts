import type { StoredEvent, TollgateEvent } from './types.js'

/**
 * The event log: one interface, two adapters (`JetStreamLog` on NATS, `EmbeddedLog` in LMDB),
 * one shared test suite (test/events/log-suite.ts). Everything that must survive a restart is
 * appended here; LMDB projections are rebuilt from it.
 */
export interface EventLog {
  /** Which adapter this is, for logs and /metrics. */
  readonly kind: 'jetstream' | 'embedded'
  /**
   * Append events in order; resolves once every one is durably stored (acknowledged). An event
   * whose `id` the log already holds is accepted and not stored twice (JetStream `msgID`
   * dedup, an id index in the embedded log), so re-sending after a failure is harmless.
   * Rejects with EventLogUnavailable when the log cannot be reached.
   */
  append(events: readonly TollgateEvent[]): Promise<void>
  /** Events with seq >= from, in order, at most `limit` of them (fewer at the end of the log). */
  read(from: number, limit: number): Promise<StoredEvent[]>
  /** The highest seq in the log, 0 when it is empty. */
  lastSeq(): Promise<number>
  /**
   * Deliver every event from seq `from` on, in order, in batches, now and as they are appended
   * (by this process or another one sharing the log). The next batch is not delivered before
   * the promise of the previous one settles; a rejected batch is delivered again.
   */
  follow(from: number, onBatch: (batch: StoredEvent[]) => Promise<void>): LogFollower
  close(): Promise<void>
}

export interface LogFollower {
  stop(): Promise<void>
}

/** The log cannot be reached now (NATS down, stream missing, LMDB closed): try again later. */
export class EventLogUnavailable extends Error {
  override name = 'EventLogUnavailable'
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
  }
}
