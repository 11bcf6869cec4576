import type { EventLog } from '../events/log.js'
import type { StateStore } from '../store/state-store.js'
import type { StateWriter } from '../store/state-writer.js'
import type { UsageHold } from './usage-hold.js'

/** meta: the checkpoint of usage partition p is `checkpoint.usage.<p>` (the log's own is `checkpoint`). */
export const PARTITION_CHECKPOINT_PREFIX = 'checkpoint.usage.'

/** One log the projector reads, with its own checkpoint in the store: the event log, or one usage partition. */
export class LogSource {
  readonly #key: string | undefined
  /** Its last seq as last seen; caughtUp() compares the checkpoint with it. */
  target: number | undefined
  /** When its last transaction was committed (performance.now()); -Infinity before the first. */
  committedAt = Number.NEGATIVE_INFINITY
  /** Its usage held while following. */
  readonly hold: UsageHold

  constructor(
    readonly log: EventLog,
    readonly partition: number | undefined,
    hold: (self: LogSource) => UsageHold,
  ) {
    this.#key = partition === undefined ? undefined : `${PARTITION_CHECKPOINT_PREFIX}${partition}`
    this.hold = hold(this)
  }

  /** Its checkpoint as the store has it (outside a transaction). */
  stored(store: StateStore): number {
    return this.#key === undefined ? store.checkpoint() : ((store.table('meta').get(this.#key) as number | undefined) ?? 0)
  }

  get(writer: StateWriter): number {
    return this.#key === undefined ? writer.checkpoint() : (writer.metaValue(this.#key) ?? 0)
  }

  set(writer: StateWriter, seq: number): void {
    if (this.#key === undefined) writer.setCheckpoint(seq)
    else writer.setMetaValue(this.#key, seq)
  }

  raiseTarget(seq: number): void {
    if (this.target === undefined || seq > this.target) this.target = seq
  }

  /** For errors: "the jetstream log", "usage partition 2 of the jetstream log". */
  name(main: EventLog): string {
    return this.partition === undefined ? `the ${main.kind} log` : `usage partition ${this.partition} of the ${main.kind} log`
  }
}
