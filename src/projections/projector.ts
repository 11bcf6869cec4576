import type { EventBatch } from '../events/event-batch.js'
import type { EventLog, LogFollower } from '../events/log.js'
import { categoryOf, EVENT_TYPES, type EventType, type StoredEvent } from '../events/types.js'
import type { StateStore } from '../store/state-store.js'
import { accountProjection } from './account-projection.js'
import { billingProjection } from './billing-projection.js'
import { keyProjection } from './key-projection.js'
import type { Projection } from '../store/projection.js'
import { usageProjection } from '../usage/usage-projection.js'
import { penaltyProjection } from './penalty-projection.js'
import { BatchMerge } from './batch-merge.js'
import { ProjectionGap, ProjectionAheadOfLog } from './errors.js'
import { LogSource } from './log-source.js'
import { type ProjectorChanges, Touched } from './touched.js'
import { UsageHold } from './usage-hold.js'
import { checkUsageMode, markUsageSkipped } from './usage-mode.js'

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
const projectionsOf = (projections: readonly Projection[]): ReadonlyMap<string, readonly Projection[]> =>
  new Map(EVENT_TYPES.map((type) => [type, projections.filter((projection) => projection.handles.has(type))]))
const PROJECTIONS_OF = projectionsOf(PROJECTIONS)
/** The same without usage (`usage.project` false): usage events only move the checkpoint. */
const PROJECTIONS_BUT_USAGE_OF = projectionsOf(PROJECTIONS.filter((projection) => projection !== usageProjection))
const NONE: readonly Projection[] = []

const isUsage = ({ event }: StoredEvent): boolean => categoryOf(event.type) === 'usage'

export interface ProjectorOptions {
  /** Most events per LMDB transaction (default 256). */
  batch?: number
  /**
   * While following, batches of usage alone are held until this long after the last commit of
   * their log (default USAGE_COMMIT_MS), and committed together: see UsageHold.
   */
  usageCommitMs?: number
  /**
   * Whether usage is projected (default true; config `usage.project`). false: usage events are
   * read past (they only move the checkpoint), usage partitions are not read at all, and the store
   * is marked so that a projector that projects usage refuses it (usage-mode.ts).
   */
  usage?: boolean
  /** Called after each committed batch that touched keys or accounts. */
  onApplied?: (changes: ProjectorChanges) => void
  /** Called when a batch fails (the log delivers it again; held usage is tried again) or onApplied throws. */
  onError?: (error: Error) => void
}

/**
 * How long after a log's last commit its held usage is committed: the default `usage.intervalMs`,
 * so that each instance's report of an interval is in one transaction with the others' (UsageHold).
 */
export const USAGE_COMMIT_MS = 1_000

const PROJECTOR_DEFAULTS = Object.freeze({ batch: 256, usageCommitMs: USAGE_COMMIT_MS })

export interface CatchUpOptions {
  /** Told after each committed transaction: the checkpoint, and the seq this catch-up reads up to. */
  onProgress?: (checkpoint: number, target: number) => void
  /** Once aborted, no transaction is begun: catchUp rejects with the signal's reason. */
  signal?: AbortSignal
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
  readonly #batch: number
  readonly #onApplied?: (changes: ProjectorChanges) => void
  readonly #onError?: (error: Error) => void
  readonly #usageCommitMs: number
  /** The log, then its usage partitions (EventLog.partitions): each read from its own checkpoint. */
  readonly #sources: readonly LogSource[]
  readonly #main: LogSource
  readonly #projectionsOf: ReadonlyMap<string, readonly Projection[]>
  /** Whether usage is skipped and the store not yet known to be marked so (usage-mode.ts). */
  #markSkipped: boolean
  #followers: LogFollower[] = []

  constructor(store: StateStore, log: EventLog, opts: ProjectorOptions = {}) {
    const batch = opts.batch ?? PROJECTOR_DEFAULTS.batch
    if (!Number.isInteger(batch) || batch < 1) throw new RangeError(`Projector option batch must be a positive integer, got ${batch}`)
    this.#store = store
    this.#batch = batch
    this.#usageCommitMs = opts.usageCommitMs ?? PROJECTOR_DEFAULTS.usageCommitMs
    this.#onApplied = opts.onApplied
    this.#onError = opts.onError
    const usage = opts.usage ?? true
    checkUsageMode(store, usage)
    this.#projectionsOf = usage ? PROJECTIONS_OF : PROJECTIONS_BUT_USAGE_OF
    this.#markSkipped = !usage
    // Held usage (UsageHold): at most 8 transactions' worth, so that a stop or a key commits it in a few.
    const holdLimit = 8 * batch
    const sourceOf = (partition: EventLog, p: number | undefined): LogSource =>
      new LogSource(partition, p, (self) => new UsageHold((events) => this.#commitHeld(self, events), holdLimit))
    this.#main = sourceOf(log, undefined)
    // Usage partitions hold nothing but usage: an instance that skips usage does not read them.
    this.#sources = usage ? [this.#main, ...log.partitions.map((partition, p) => sourceOf(partition, p))] : [this.#main]
  }

  /** Follow the log (and each usage partition) from its checkpoint + 1, now and as events are appended, until stop(). */
  start(): void {
    if (this.#followers.length > 0) return
    for (const source of this.#sources) {
      source.hold.resume()
      this.#followers.push(
        source.log.follow(source.stored(this.#store) + 1, async (batch) => {
          const wait = source.committedAt + this.#usageCommitMs - performance.now()
          if (batch.every(isUsage) && source.hold.hold(batch, Math.max(0, wait))) return
          try {
            // What is held comes before the batch in the log: both in order, in one go.
            await this.#applyEvents(source, source.hold.size > 0 ? source.hold.take().concat(batch) : batch)
          } catch (error) {
            this.#onError?.(error as Error)
            throw error // the log delivers the batch again
          }
        }),
      )
      // caughtUp() needs a target even when nobody calls catchUp().
      source.log.lastSeq().then(
        (seq) => source.raiseTarget(seq),
        (error: Error) => this.#onError?.(error),
      )
    }
  }

  /** Events of usage held for their commit now (UsageHold): none once stopped. */
  holding(): number {
    let sum = 0
    for (const source of this.#sources) sum += source.hold.size
    return sum
  }

  /** Events applied, over the log and its partitions (the sum of their checkpoints). */
  applied(): number {
    let sum = 0
    for (const source of this.#sources) sum += source.stored(this.#store)
    return sum
  }

  /** Events the log and its partitions hold now (the sum of their last seqs). */
  async held(): Promise<number> {
    const seqs = await Promise.all(this.#sources.map((source) => source.log.lastSeq()))
    return seqs.reduce((a, b) => a + b, 0)
  }

  /**
   * Apply everything up to the log's last seq as of now (and each partition's), then resolve with
   * the events applied (the checkpoint, without partitions). Each is read by one reader from its
   * checkpoint on (EventLog.readAll), in transactions of `batch` events; partitions are read in
   * parallel and applied in step (see BatchMerge).
   */
  async catchUp(opts: CatchUpOptions = {}): Promise<number> {
    // The checkpoint first, then the log's end: another projector on this store (the gateway's,
    // beside a command) applies only events the log holds, so a checkpoint read before the end
    // is at most the end. Read the other way round, an event appended and applied in between
    // made a live store look built from another log.
    const checkpoints = this.#sources.map((source) => source.stored(this.#store))
    const targets = await Promise.all(this.#sources.map((source) => source.log.lastSeq()))
    for (const [i, source] of this.#sources.entries()) {
      if (checkpoints[i]! > targets[i]!) {
        throw new ProjectionAheadOfLog(
          `the state store at ${this.#store.path} has applied events up to seq ${checkpoints[i]} of ${source.name(this.#main.log)} but it ends at seq ${targets[i]}: ` +
            'it was built from another log; rebuild it with `tollgate replay`',
        )
      }
    }
    opts.signal?.throwIfAborted()
    const target = targets.reduce((a, b) => a + b, 0)
    const reached = [...checkpoints]
    const sum = (): number => reached.reduce((a, b) => a + b, 0)
    const todo = this.#sources.map((_, i) => i).filter((i) => checkpoints[i]! < targets[i]!)
    // readAll hands over at most `batch` events: each batch is one transaction.
    const apply = async (i: number, batch: EventBatch): Promise<void> => {
      opts.signal?.throwIfAborted()
      reached[i] = await this.#applyChunk(this.#sources[i]!, batch, batch.firstSeq!)
      opts.onProgress?.(sum(), target)
    }
    if (todo.length === 1) {
      const i = todo[0]!
      await this.#sources[i]!.log.readAll(checkpoints[i]! + 1, (batch) => apply(i, batch), { to: targets[i], batch: this.#batch })
    } else if (todo.length > 1) {
      const merge = new BatchMerge(todo.length)
      await Promise.all(
        todo.map((i, k) =>
          this.#sources[i]!.log.readAll(checkpoints[i]! + 1, (batch) => merge.offer(k, batch, () => apply(i, batch)), {
            to: targets[i],
            batch: this.#batch,
          }).then(
            () => merge.done(k),
            (err: unknown) => merge.fail(err),
          ),
        ),
      )
      merge.throwIfFailed()
    }
    for (const i of todo) {
      if (reached[i]! < targets[i]!) {
        throw new ProjectionGap(`${this.#sources[i]!.name(this.#main.log)} has no event at seq ${reached[i]! + 1} (state store at ${this.#store.path})`)
      }
    }
    for (const [i, source] of this.#sources.entries()) source.raiseTarget(targets[i]!)
    return this.#sources.length === 1 ? reached[0]! : sum()
  }

  /** Whether the store has applied the log up to its last seq as last seen (false before that is known). */
  caughtUp(): boolean {
    return this.#sources.every((source) => source.target !== undefined && source.stored(this.#store) >= source.target)
  }

  async stop(): Promise<void> {
    const followers = this.#followers
    this.#followers = []
    for (const source of this.#sources) source.hold.stop()
    await Promise.all(followers.map((follower) => follower.stop()))
    // What is held is committed now; should that fail, the checkpoint has not passed it and the next start reads it again.
    for (const source of this.#sources) await this.#commitHeld(source, source.hold.take()).catch(() => undefined)
  }

  /**
   * Apply stored events (in seq order) in transactions of at most `batch` events; events at or
   * below the checkpoint are skipped, missing events before the first one are read from the log
   * first. Resolves to the checkpoint after the last transaction.
   */
  async apply(events: readonly StoredEvent[]): Promise<number> {
    return this.#applyEvents(this.#main, events)
  }

  /** Held usage (UsageHold), committed: a failure is reported, and rejects so that the hold keeps it. */
  async #commitHeld(source: LogSource, events: readonly StoredEvent[]): Promise<void> {
    if (events.length === 0) return
    try {
      await this.#applyEvents(source, events)
    } catch (error) {
      this.#onError?.(error as Error)
      throw error
    }
  }

  async #applyEvents(source: LogSource, events: readonly StoredEvent[]): Promise<number> {
    let checkpoint = source.stored(this.#store)
    for (let i = 0; i < events.length; i += this.#batch) {
      const chunk = events.slice(i, i + this.#batch)
      checkpoint = await this.#applyChunk(source, chunk, chunk[0]!.seq)
    }
    source.raiseTarget(checkpoint)
    return checkpoint
  }

  /** One transaction of events from seq `first` on, after those missing before it; returns the new checkpoint. */
  async #applyChunk(source: LogSource, chunk: Iterable<StoredEvent>, first: number): Promise<number> {
    let checkpoint = source.stored(this.#store)
    // A batch that starts past checkpoint + 1 (the store was wiped under a running follower,
    // or another log's follower) would otherwise skip the events in between forever.
    while (checkpoint + 1 < first) checkpoint = await this.#readAndApply(source, checkpoint + 1, first - 1)
    checkpoint = this.#commit(source, chunk)
    source.raiseTarget(checkpoint)
    return checkpoint
  }

  /** Read events from..upTo (at most one batch) from the log and apply them; returns the new checkpoint. */
  async #readAndApply(source: LogSource, from: number, upTo: number): Promise<number> {
    const events = await source.log.read(from, Math.min(this.#batch, upTo - from + 1))
    if (events.length === 0 || events[0]!.seq !== from) {
      throw new ProjectionGap(`${source.name(this.#main.log)} has no event at seq ${from} (state store at ${this.#store.path})`)
    }
    return this.#commit(source, events)
  }

  /** One transaction: skip what is applied, apply the rest in order, move the checkpoint. */
  #commit(source: LogSource, chunk: Iterable<StoredEvent>): number {
    const { checkpoint, changes } = this.#store.write((writer) => {
      let checkpoint = source.get(writer)
      const touched = new Touched()
      // One pass: an EventBatch decodes each event as it is reached.
      for (const { seq, event } of chunk) {
        touched.add(event, writer)
        if (seq <= checkpoint) continue // applied already, by this projector or another one
        if (seq !== checkpoint + 1) {
          throw new ProjectionGap(`event seq ${seq} follows checkpoint ${checkpoint}: seq ${checkpoint + 1} is missing`)
        }
        for (const projection of this.#projectionsOf.get(event.type) ?? NONE) projection.apply(event, writer)
        checkpoint = seq
      }
      source.set(writer, checkpoint)
      if (this.#markSkipped) markUsageSkipped(writer)
      return { checkpoint, changes: touched.changes() }
    })
    source.committedAt = performance.now()
    this.#markSkipped = false
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
}
