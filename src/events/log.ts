import type { EventBatch } from './event-batch.js'
import type { StoredEvent, TollgateEvent } from './types.js'

/**
 * The event log: one interface, two adapters (`JetStreamLog` on NATS, `EmbeddedLog` in LMDB),
 * one shared test suite (test/events/log-suite.ts). Everything that must survive a restart is
 * appended here; LMDB projections are rebuilt from it.
 */
export interface EventLog {
  /** Which adapter this is, for logs and /metrics. */
  readonly kind: 'jetstream' | 'embedded'
  /** Whether calls can reach the log now (NATS connected; the embedded log: until closed). */
  readonly connected: boolean
  /**
   * The usage partitions (events.partitions > 1, JetStream only): each a log of its own seqs,
   * holding the usage of its accounts, to be read beside this one (the projector reads them all).
   * Appends go through this log, which sends usage to its partition. Empty: this log holds all.
   */
  readonly partitions: readonly EventLog[]
  /**
   * Append events in order; resolves once every one is durably stored (acknowledged). An event
   * whose `id` the log already holds is accepted and not stored twice (JetStream `msgID`
   * dedup, an id index in the embedded log), so re-sending after a failure is harmless.
   * Rejects with EventLogUnavailable when the log cannot be reached.
   */
  append(events: readonly TollgateEvent[]): Promise<void>
  /**
   * Append the events of one command to an account's own stream (see subjectOf), if the stream is
   * still at `expectedVersion`: the version readAccount gave, 0 for an account without events.
   * Resolves with the new version. Rejects with WrongExpectedVersion when another command appended
   * to the account meanwhile (reload, decide again), EventLogUnavailable when the log is down.
   * This is how two commands racing on one account (two keys issued, one transfer for two
   * invoices) are told apart: by the log, not by a projection.
   */
  appendToAccount(accountId: string, events: readonly TollgateEvent[], expectedVersion: number): Promise<number>
  /**
   * An account's own events in order, and its stream's version (the seq of the last one, 0: none).
   * With `after` (a version read before), only the events past it: a host that keeps the state it
   * folded reads what is new, not the whole stream (JetStream: no consumer when nothing is new).
   */
  readAccount(accountId: string, after?: number): Promise<AccountStream>
  /** Events with seq >= from, in order, at most `limit` of them (fewer at the end of the log). */
  read(from: number, limit: number): Promise<StoredEvent[]>
  /**
   * Read the log from seq `from` to `opts.to` (default: its last seq as of this call) with ONE
   * reader (JetStream: one ordered consumer for the whole range, no stream info per batch), handing
   * the events to `onBatch` in order, at most `opts.batch` at a time, as bytes decoded when the
   * batch is iterated (see EventBatch); the next batch is read only once the promise of the
   * previous one settles, so memory holds about one batch. Resolves with the last seq delivered
   * (from - 1 when there was nothing). Rejects with onBatch's error (nothing more is delivered),
   * or EventLogUnavailable when the log cannot be read.
   * @example
   * await log.readAll(checkpoint + 1, (batch) => { for (const { seq, event } of batch) apply(seq, event) }, { batch: 20_000 })
   */
  readAll(from: number, onBatch: (batch: EventBatch) => Promise<void> | void, opts?: ReadAllOptions): Promise<number>
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

export interface ReadAllOptions {
  /** Last seq to read (default: the log's last seq when readAll is called). */
  to?: number
  /** Most events per onBatch call (default READ_ALL_DEFAULTS.batch). */
  batch?: number
}

export const READ_ALL_DEFAULTS = Object.freeze({ batch: 1000 })

export interface AccountStream {
  events: StoredEvent[]
  version: number
}

export interface LogFollower {
  stop(): Promise<void>
}
