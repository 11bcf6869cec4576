import type { EventBatch } from '../events/event-batch.js'
import type { EventLog, LogFollower } from '../events/log.js'
import { categoryOf, EVENT_TYPES, type EventType, type StoredEvent, type TollgateEvent } from '../events/types.js'
import type { StateStore } from '../store/state-store.js'
import type { StateWriter } from '../store/state-writer.js'
import { accountProjection } from './account-projection.js'
import { billingProjection } from './billing-projection.js'
import { keyProjection } from './key-projection.js'
import type { Projection } from '../store/projection.js'
import { usageProjection } from '../usage/usage-projection.js'
import { penaltyProjection } from './penalty-projection.js'

/** Every projection, applied in this order to each event. */
export const PROJECTIONS: readonly Projection[] = Object.freeze([accountProjection, keyProjection, usageProjection, penaltyProjection, billingProjection])

/**
 * Event types no projection stores, and why: each event type of the catalog is handled by some
 * projection or named here (test/projections/handled-events.test.ts), so that a new event type
 * cannot be forgotten.
 */
export const NOT_PROJECTED: Readonly<Partial<Record<EventType, string>>> = Object.freeze({
  WsLimited: 'a record of a WebSocket refusal for consumers of the stream; the decision in force is WsCooldownStarted or WsPenaltyImposed',
})

/**
 * The projections of each event type, in PROJECTIONS order: one lookup an event instead of one
 * per projection (five for each of a replay's million events).
 */
const PROJECTIONS_OF: ReadonlyMap<string, readonly Projection[]> = new Map(
  EVENT_TYPES.map((type) => [type, PROJECTIONS.filter((projection) => projection.handles.has(type))]),
)
const NONE: readonly Projection[] = []

/** What a batch touched: the gateway refreshes the actors of these keys and accounts. */
export interface ProjectorChanges {
  keyHashes: string[]
  accountIds: string[]
  /** Penalty keys (`ip:<address>`…) whose decisions the batch carried. */
  penaltyKeys: string[]
}

export interface ProjectorOptions {
  /** Most events per LMDB transaction (default 256). */
  batch?: number
  /** Called after each committed batch that touched keys or accounts. */
  onApplied?: (changes: ProjectorChanges) => void
  /** Called when a batch fails (the log delivers it again) or onApplied throws. */
  onError?: (error: Error) => void
}

const PROJECTOR_DEFAULTS = Object.freeze({ batch: 256 })

export interface CatchUpOptions {
  /** Told after each committed transaction: the checkpoint, and the seq this catch-up reads up to. */
  onProgress?: (checkpoint: number, target: number) => void
  /** Once aborted, no transaction is begun: catchUp rejects with the signal's reason. */
  signal?: AbortSignal
}

/** The log does not hold the events the store needs next (a gap, or a store built from another log). */
export class ProjectionGap extends Error {
  override name = 'ProjectionGap'
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
  }
}

/** The store has applied events the log does not have: it was built from another log. */
export class ProjectionAheadOfLog extends Error {
  override name = 'ProjectionAheadOfLog'
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
  }
}

/**
 * Applies the event log to the state store. Each batch is written with its checkpoint (the last
 * seq applied) in one LMDB transaction, and inside that transaction every event at or below the
 * checkpoint is skipped: so a batch delivered twice (a crash between commit and ack, a follower
 * and catchUp() racing, two projectors or two processes on one store) is applied once.
 * @example
 * const projector = new Projector(store, log, { onApplied: (c) => registry.refresh(c) })
 * await projector.catchUp()
 * projector.start()
 */
export class Projector {
  readonly #store: StateStore
  readonly #log: EventLog
  readonly #batch: number
  readonly #onApplied?: (changes: ProjectorChanges) => void
  readonly #onError?: (error: Error) => void
  #follower: LogFollower | undefined
  /** The log's last seq as last seen; caughtUp() compares the checkpoint with it. */
  #target: number | undefined

  constructor(store: StateStore, log: EventLog, opts: ProjectorOptions = {}) {
    const batch = opts.batch ?? PROJECTOR_DEFAULTS.batch
    if (!Number.isInteger(batch) || batch < 1) throw new RangeError(`Projector option batch must be a positive integer, got ${batch}`)
    this.#store = store
    this.#log = log
    this.#batch = batch
    this.#onApplied = opts.onApplied
    this.#onError = opts.onError
  }

  /** Follow the log from checkpoint + 1, now and as events are appended, until stop(). */
  start(): void {
    if (this.#follower !== undefined) return
    this.#follower = this.#log.follow(this.#store.checkpoint() + 1, async (batch) => {
      try {
        await this.apply(batch)
      } catch (error) {
        this.#onError?.(error as Error)
        throw error // the log delivers the batch again
      }
    })
    // caughtUp() needs a target even when nobody calls catchUp().
    this.#log.lastSeq().then(
      (seq) => this.#raiseTarget(seq),
      (error: Error) => this.#onError?.(error),
    )
  }

  /**
   * Apply everything up to the log's last seq as of now, then resolve with the checkpoint. The log
   * is read by one reader from the checkpoint on (EventLog.readAll), in transactions of `batch` events.
   */
  async catchUp(opts: CatchUpOptions = {}): Promise<number> {
    // The checkpoint first, then the log's end: another projector on this store (the gateway's,
    // beside a command) applies only events the log holds, so a checkpoint read before the end
    // is at most the end. Read the other way round, an event appended and applied in between
    // made a live store look built from another log.
    const checkpoint = this.#store.checkpoint()
    const target = await this.#log.lastSeq()
    if (checkpoint > target) {
      throw new ProjectionAheadOfLog(
        `the state store at ${this.#store.path} has applied events up to seq ${checkpoint} but the ${this.#log.kind} log ends at seq ${target}: ` +
          'it was built from another log; rebuild it with `tollgate replay`',
      )
    }
    opts.signal?.throwIfAborted()
    let reached = checkpoint
    if (checkpoint < target) {
      // readAll hands over at most `batch` events: each batch is one transaction.
      const apply = async (batch: EventBatch): Promise<void> => {
        opts.signal?.throwIfAborted()
        reached = await this.#applyChunk(batch, batch.firstSeq!)
        opts.onProgress?.(reached, target)
      }
      await this.#log.readAll(checkpoint + 1, apply, { to: target, batch: this.#batch })
      if (reached < target) throw new ProjectionGap(`the ${this.#log.kind} log has no event at seq ${reached + 1} (state store at ${this.#store.path})`)
    }
    this.#raiseTarget(target)
    return reached
  }

  /** Whether the store has applied the log up to its last seq as last seen (false before that is known). */
  caughtUp(): boolean {
    return this.#target !== undefined && this.#store.checkpoint() >= this.#target
  }

  async stop(): Promise<void> {
    const follower = this.#follower
    this.#follower = undefined
    await follower?.stop()
  }

  /**
   * Apply stored events (in seq order) in transactions of at most `batch` events; events at or
   * below the checkpoint are skipped, missing events before the first one are read from the log
   * first. Resolves to the checkpoint after the last transaction.
   */
  async apply(events: readonly StoredEvent[]): Promise<number> {
    let checkpoint = this.#store.checkpoint()
    for (let i = 0; i < events.length; i += this.#batch) {
      const chunk = events.slice(i, i + this.#batch)
      checkpoint = await this.#applyChunk(chunk, chunk[0]!.seq)
    }
    this.#raiseTarget(checkpoint)
    return checkpoint
  }

  /** One transaction of events from seq `first` on, after those missing before it; returns the new checkpoint. */
  async #applyChunk(chunk: Iterable<StoredEvent>, first: number): Promise<number> {
    let checkpoint = this.#store.checkpoint()
    // A batch that starts past checkpoint + 1 (the store was wiped under a running follower,
    // or another log's follower) would otherwise skip the events in between forever.
    while (checkpoint + 1 < first) checkpoint = await this.#readAndApply(checkpoint + 1, first - 1)
    checkpoint = this.#commit(chunk)
    this.#raiseTarget(checkpoint)
    return checkpoint
  }

  /** Read events from..upTo (at most one batch) from the log and apply them; returns the new checkpoint. */
  async #readAndApply(from: number, upTo: number): Promise<number> {
    const events = await this.#log.read(from, Math.min(this.#batch, upTo - from + 1))
    if (events.length === 0 || events[0]!.seq !== from) {
      throw new ProjectionGap(`the ${this.#log.kind} log has no event at seq ${from} (state store at ${this.#store.path})`)
    }
    return this.#commit(events)
  }

  /** One transaction: skip what is applied, apply the rest in order, move the checkpoint. */
  #commit(chunk: Iterable<StoredEvent>): number {
    const { checkpoint, changes } = this.#store.write((writer) => {
      let checkpoint = writer.checkpoint()
      const touched = new Touched()
      // One pass: an EventBatch decodes each event as it is reached.
      for (const { seq, event } of chunk) {
        touched.add(event, writer)
        if (seq <= checkpoint) continue // applied already, by this projector or another one
        if (seq !== checkpoint + 1) {
          throw new ProjectionGap(`event seq ${seq} follows checkpoint ${checkpoint}: seq ${checkpoint + 1} is missing`)
        }
        for (const projection of PROJECTIONS_OF.get(event.type) ?? NONE) projection.apply(event, writer)
        checkpoint = seq
      }
      writer.setCheckpoint(checkpoint)
      return { checkpoint, changes: touched.changes() }
    })
    if (this.#onApplied !== undefined && (changes.keyHashes.length > 0 || changes.accountIds.length > 0 || changes.penaltyKeys.length > 0)) {
      try {
        this.#onApplied(changes)
      } catch (error) {
        // The batch is committed: failing it now would only redeliver events that are skipped.
        this.#onError?.(error as Error)
      }
    }
    return checkpoint
  }

  #raiseTarget(seq: number): void {
    if (this.#target === undefined || seq > this.#target) this.#target = seq
  }
}

/**
 * The keys and accounts that the account events of a chunk concern, skipped ones included: when
 * the CLI applied a KeyRevoked to a store the gateway shares, the gateway's projector skips it,
 * and its actors must still hear that the key changed.
 */
class Touched {
  readonly #keyHashes = new Set<string>()
  readonly #accountIds = new Set<string>()
  readonly #penaltyKeys = new Set<string>()

  add(event: TollgateEvent, writer: StateWriter): void {
    if (event.type === 'IpThrottled') this.#penaltyKeys.add(`ip:${event.ip}`)
    if (event.type === 'WsCooldownStarted' || event.type === 'WsPenaltyImposed') {
      // A block decided by another instance (or before a restart) must reach this key's actor.
      const hash = writer.keyHashOf(event.keyId)
      if (hash !== undefined) this.#keyHashes.add(hash)
      return
    }
    if (categoryOf(event.type) !== 'accounts' || !('accountId' in event)) return
    this.#accountIds.add(event.accountId)
    if (event.type === 'KeyIssued') this.#keyHashes.add(event.keyHash)
    if (event.type === 'KeyRevoked' || event.type === 'DomainsRestricted' || event.type === 'KeyRestricted' || event.type === 'KeyTokenRequired') {
      const hash = writer.keyHashOf(event.keyId)
      if (hash !== undefined) this.#keyHashes.add(hash)
    }
  }

  changes(): ProjectorChanges {
    return { keyHashes: [...this.#keyHashes], accountIds: [...this.#accountIds], penaltyKeys: [...this.#penaltyKeys] }
  }
}
