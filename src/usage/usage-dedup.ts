import type { KeyRuleRefused, NotificationsRecorded, RateLimited, UsageRecorded } from '../events/types.js'
import type { BufferedTable } from '../store/buffered-table.js'
import { DAY_MS, USAGE_NEWEST, usageEventKey } from '../store/records.js'

/** A usage event: what the usage projection counts once per id. */
export type CountedEvent = UsageRecorded | RateLimited | NotificationsRecorded | KeyRuleRefused

/**
 * Ids are kept for this long behind the newest interval seen. The log drops a re-sent id itself
 * within JetStream's duplicate window (10 minutes); past it, a re-sent event arrives after the
 * original, so the producer's watermark below catches it. The ids only need to cover events of one
 * producer stored out of order (a batch partly stored, then sent again after the outbox's backoff).
 */
export const USAGE_IDS_KEPT_MS = 60_000
/** The id window moves by whole minutes (a fold per minute of event time, not per event). */
const ID_STEP_MS = 60_000
/**
 * A producer's watermark is kept this long after its last interval; an event older than this
 * behind the newest interval is not counted (nothing says whether it was). Longer than the 35 days
 * of usage by hour, so that usage sent late after a long outage still joins its key's totals.
 */
export const USAGE_PRODUCERS_KEPT_MS = 90 * DAY_MS

const NEWEST = USAGE_NEWEST
/** meta: usage events not counted because they were older than every window. */
const LATE = 'usageLate'

export interface UsageDedupTables {
  /** `<intervalStart, 15 digits>|<id>` → its producer: the ids of the last USAGE_IDS_KEPT_MS. */
  usageEvents: BufferedTable<string>
  /** producer → its watermark: the newest intervalStart of it that left the id window. */
  usageProducers: BufferedTable<number>
  meta: BufferedTable<number>
}

/**
 * Counts each usage event id once, in bounded state: the ids of the last minutes of event time, and
 * for older events a watermark per producer (an instance's stream of one type for one key,
 * network and node kind, whose intervals it sends in order, so that a re-sent event is at or
 * below the watermark of its producer and a new one above it).
 *
 * Everything here is a function of the events in log order (their intervalStart, never the
 * clock), so live projection, a replay and a resumed replay keep and drop the same rows.
 */
export class UsageDedup {
  readonly #t: UsageDedupTables
  /** The newest intervalStart LMDB held when this transaction began; undefined: not read yet. */
  #committedNewest: number | undefined
  /**
   * Ids of intervals after #committedNewest, which LMDB cannot hold yet, added in this transaction,
   * by minute of their interval. A fold takes whole minutes out, and what is still in the window at
   * the end is written (see flush). In a replay nearly every id is one of these, and most leave the
   * window before the commit: never written. Each id costs one map entry and keeps nothing but its
   * own string: with a string per id naming its interval and producer, these were most of what a
   * replay's young-generation collections had to copy (half its projection time).
   */
  readonly #fresh = new Map<number, FreshMinute>()
  /** The minute of #fresh the last fresh id went to, and its ids (undefined: none yet). */
  #lastMinute = Number.NaN
  #lastIds: FreshMinute | undefined
  /** Producers of this transaction's fresh ids, by number (FreshMinute holds numbers, not names). */
  readonly #producers: string[] = []
  /** The same by key id, with the fields that tell a key's producers apart (see #producerNumber). */
  readonly #producersByKey = new Map<string, ProducerSlot[]>()
  /** The newest intervalStart as this transaction has it (meta NEWEST); undefined: not read yet. */
  #newest: number | undefined
  /** Keys of other ids added to usageEvents in this transaction, by minute of their interval. */
  readonly #added = new Map<number, string[]>()
  /** See #foldNewestRoom. */
  #foldNewest = new Float64Array(0)
  /**
   * Each producer's watermark, by number (NaN: not looked up, or may have changed): as
   * usageProducers holds it, or newer for the numbers in #unwritten.
   */
  #watermarks = new Float64Array(0)
  /**
   * Producers whose watermark moved in a fold and is not put into usageProducers yet, and a flag
   * per number (1: listed). Written once, at the flush or before usageProducers is read or
   * written by name: with intervals further apart than the id window's step (a week of history),
   * nearly every interval folds, and a producer's watermark was put by name at each fold (a
   * million puts into the table's pending map in a replay of 1,000,000 events).
   */
  readonly #unwritten: number[] = []
  #isUnwritten = new Uint8Array(0)
  /** Where this transaction's last fold ended (LMDB's ids before it are removed); undefined: no fold yet. */
  #foldedTo: string | undefined
  constructor(tables: UsageDedupTables) {
    this.#t = tables
  }

  /** Write the ids added in this transaction that are still in the window (before the tables are flushed). */
  flush(): void {
    this.#writeWatermarks()
    for (const [minute, ids] of this.#fresh) {
      for (const [id, entry] of ids) {
        const producer = Math.floor(entry / MINUTE_SLOTS)
        this.#t.usageEvents.put(usageEventKey(minute + (entry - producer * MINUTE_SLOTS), id), this.#producers[producer]!)
      }
    }
    this.reset()
  }

  /** A transaction ended (or aborts): forget what it added; what LMDB holds may have changed. */
  reset(): void {
    this.#committedNewest = undefined
    this.#newest = undefined
    this.#fresh.clear()
    this.#lastMinute = Number.NaN
    this.#lastIds = undefined
    // A fold that threw may have left times in it.
    this.#foldNewest.fill(-Infinity)
    this.#watermarks.fill(Number.NaN)
    for (const number of this.#unwritten) this.#isUnwritten[number] = 0
    this.#unwritten.length = 0
    this.#producers.length = 0
    this.#producersByKey.clear()
    this.#added.clear()
    this.#foldedTo = undefined
  }

  /** Marks the event counted; false when it already was, or may have been (then it is not counted again). */
  markCounted(event: CountedEvent): boolean {
    const start = event.intervalStart
    const newest = this.#advance(start)
    const number = this.#producerNumber(event)
    const producer = this.#producers[number]!
    if (start >= idHorizon(newest)) {
      const minute = start - (start % ID_STEP_MS)
      // LMDB holds no id of an interval after the newest one it had seen: no need to ask it.
      if (start > (this.#committedNewest ??= this.#t.meta.getCommitted(NEWEST) ?? -Infinity)) {
        // Events come mostly in interval order: the minute of the event before, most often.
        let ids = minute === this.#lastMinute ? this.#lastIds! : this.#fresh.get(minute)
        if (ids === undefined) this.#fresh.set(minute, (ids = new Map()))
        this.#lastMinute = minute
        this.#lastIds = ids
        if (ids.has(event.id)) return false
        ids.set(event.id, number * MINUTE_SLOTS + (start - minute))
        return true
      }
      const key = usageEventKey(start, event.id)
      if (this.#t.usageEvents.get(key) !== undefined) return false
      this.#t.usageEvents.put(key, producer)
      const added = this.#added.get(minute)
      if (added === undefined) this.#added.set(minute, [key])
      else added.push(key)
      return true
    }
    // Older than the id window: the producer's watermark says whether it was counted.
    this.#writeWatermarks()
    const watermark = this.#t.usageProducers.get(producer)
    if (start < producerHorizon(newest) || (watermark !== undefined && start <= watermark)) {
      this.#t.meta.put(LATE, (this.#t.meta.get(LATE) ?? 0) + 1)
      return false
    }
    this.#t.usageProducers.put(producer, start)
    if (number < this.#watermarks.length) this.#watermarks[number] = start
    return true
  }

  /**
   * The number of an event's producer in this transaction, found by its key id and then its other
   * four fields, without building its name: a string of five fields built and hashed per event
   * was 0.3 of the 1.0 µs that markCounted took an event.
   */
  #producerNumber(e: CountedEvent): number {
    let slots = this.#producersByKey.get(e.keyId)
    if (slots === undefined) this.#producersByKey.set(e.keyId, (slots = []))
    const stream = streamOf(e)
    for (const slot of slots) {
      if (slot.type === e.type && slot.instance === e.instance && slot.network === e.network && slot.stream === stream) return slot.number
    }
    const number = this.#producers.push(producerOf(e)) - 1
    slots.push({ type: e.type, instance: e.instance, network: e.network, stream, number })
    return number
  }

  /** Usage events left uncounted because they came after every window (see USAGE_PRODUCERS_KEPT_MS). */
  late(): number {
    return this.#t.meta.get(LATE) ?? 0
  }

  /** Record `start` as seen; when the windows move, prune what fell out of them. Returns the newest intervalStart. */
  #advance(start: number): number {
    // Kept in a field: read for every usage event, it was a lookup in meta's pending writes each time.
    const before = this.#newest === undefined ? (this.#newest = this.#t.meta.get(NEWEST) ?? -Infinity) : this.#newest
    if (start <= before) return before
    this.#newest = start
    this.#t.meta.put(NEWEST, start)
    if (before === -Infinity) return start
    if (idHorizon(start) > idHorizon(before)) this.#foldIds(idHorizon(start))
    if (producerHorizon(start) > producerHorizon(before)) this.#dropProducers(producerHorizon(start))
    return start
  }

  /**
   * Ids before `horizon` leave the window; their producers' watermarks take them over. They are
   * those LMDB holds (after where this transaction's last fold ended: before it, all are removed
   * already) and those added in this transaction.
   */
  #foldIds(horizon: number): void {
    const marks = new Map<string, number>()
    const mark = (start: number, producer: string): void => {
      // '': an id kept by an older layout, whose producer is unknown (StateStore converts them).
      if (producer !== '' && start > (marks.get(producer) ?? -1)) marks.set(producer, start)
    }
    const end = usageEventKey(horizon, '')
    const gone: string[] = []
    for (const { key, value } of this.#t.usageEvents.committed({ start: this.#foldedTo ?? '', end })) {
      gone.push(key)
      mark(Number(key.slice(0, 15)), value)
    }
    this.#foldedTo = end
    for (const [minute, keys] of this.#added) {
      if (minute >= horizon) continue
      for (const key of keys) {
        gone.push(key)
        mark(Number(key.slice(0, 15)), this.#t.usageEvents.getPending(key)!)
      }
      this.#added.delete(minute)
    }
    for (const key of gone) this.#t.usageEvents.remove(key)
    // The fresh ids' newest interval per producer, by number: what a map per minute kept up to
    // date at every event before (two lookups an event), read from the ids as they leave.
    const newest = this.#foldNewestRoom()
    const moved: number[] = []
    for (const [minute, ids] of this.#fresh) {
      if (minute >= horizon) continue
      for (const entry of ids.values()) {
        const producer = Math.floor(entry / MINUTE_SLOTS)
        const start = minute + (entry - producer * MINUTE_SLOTS)
        if (newest[producer] === -Infinity) moved.push(producer)
        if (start > newest[producer]!) newest[producer] = start
      }
      this.#fresh.delete(minute)
    }
    if (this.#lastMinute < horizon) {
      this.#lastMinute = Number.NaN
      this.#lastIds = undefined
    }
    if (marks.size > 0) this.#writeWatermarks()
    for (const [producer, start] of marks) {
      if (start > (this.#t.usageProducers.get(producer) ?? -1)) this.#t.usageProducers.put(producer, start)
    }
    // Watermarks changed by name: what #watermarks knew of them may be old.
    if (marks.size > 0) this.#watermarks.fill(Number.NaN)
    const watermarks = this.#watermarks
    for (const producer of moved) {
      const start = newest[producer]!
      newest[producer] = -Infinity
      // Kept by number: a producer moves at nearly every fold, and its watermark was looked up
      // by name in a map of marks and in the table's pending writes each time.
      let watermark = watermarks[producer]!
      if (Number.isNaN(watermark)) watermark = this.#t.usageProducers.get(this.#producers[producer]!) ?? -1
      if (start > watermark) {
        watermark = start
        if (this.#isUnwritten[producer] === 0) {
          this.#isUnwritten[producer] = 1
          this.#unwritten.push(producer)
        }
      }
      watermarks[producer] = watermark
    }
  }

  /** Put the watermarks that folds moved into usageProducers (see #unwritten). */
  #writeWatermarks(): void {
    for (const number of this.#unwritten) {
      this.#t.usageProducers.put(this.#producers[number]!, this.#watermarks[number]!)
      this.#isUnwritten[number] = 0
    }
    this.#unwritten.length = 0
  }

  /**
   * Room for a time per producer of this transaction, each -Infinity (#foldIds sets them back
   * after use), and for its watermark in #watermarks.
   */
  #foldNewestRoom(): Float64Array {
    if (this.#foldNewest.length < this.#producers.length) {
      const length = Math.max(this.#producers.length, this.#foldNewest.length * 2)
      this.#foldNewest = new Float64Array(length).fill(-Infinity)
      // Kept: the watermarks not written yet are only here (and the others need no lookup again).
      const watermarks = new Float64Array(length).fill(Number.NaN)
      watermarks.set(this.#watermarks)
      this.#watermarks = watermarks
      const isUnwritten = new Uint8Array(length)
      isUnwritten.set(this.#isUnwritten)
      this.#isUnwritten = isUnwritten
    }
    return this.#foldNewest
  }

  /** Producers silent since before `horizon` are forgotten (events that old are no longer counted). */
  #dropProducers(horizon: number): void {
    this.#writeWatermarks()
    const gone: string[] = []
    for (const { key, value } of this.#t.usageProducers.range({})) if (value < horizon) gone.push(key)
    for (const key of gone) this.#t.usageProducers.remove(key)
    this.#watermarks.fill(Number.NaN)
  }
}

/**
 * Ids of one minute of intervals added in a transaction (see UsageDedup.#fresh): id → its
 * producer's number × MINUTE_SLOTS + its intervalStart's ms into the minute.
 */
type FreshMinute = Map<string, number>

/** One of a key's producers in a transaction (see UsageDedup.#producerNumber). */
interface ProducerSlot {
  type: CountedEvent['type']
  instance: string
  network: string
  stream: string
  number: number
}

/** Room for the ms of a minute in a FreshMinute entry (60,000 ≤ 2^16). */
const MINUTE_SLOTS = 65_536

/** Where the id window starts: whole minutes, so that it moves (and folds) once a minute of event time. */
function idHorizon(newest: number): number {
  return newest - (newest % ID_STEP_MS) - USAGE_IDS_KEPT_MS
}

/** Where the producers' window starts: whole days (a scan of the producers once a day of event time). */
function producerHorizon(newest: number): number {
  return newest - (newest % DAY_MS) - USAGE_PRODUCERS_KEPT_MS
}

/** One producer's stream of usage events: they come in interval order (one instance's meter and outbox). */
function producerOf(e: CountedEvent): string {
  return `${e.type}|${e.instance}|${e.keyId}|${e.network}|${streamOf(e)}`
}

/**
 * What tells a key's streams of one type apart on one network besides the instance: the node kind,
 * or for KeyRuleRefused (judged before a call is routed: no node kind) the rule, each rule's
 * intervals being sent in order.
 */
function streamOf(e: CountedEvent): string {
  return e.type === 'KeyRuleRefused' ? e.rule : e.kind
}
