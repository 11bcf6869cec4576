import { BatchDecoder } from './batch-decoder.js'
import { EventDecodeError } from './errors.js'
import type { StoredEvent, TollgateEvent } from './types.js'

/** First size of a batch's buffer; it doubles as events come (an event is ~250 bytes). */
const INITIAL_BYTES = 256 * 1024
/** First room for seqs; it doubles too. */
const INITIAL_EVENTS = 1024

/** One for every batch of this thread: its interned strings serve the next batches too (see BatchDecoder). */
const decoder = new BatchDecoder()

/** A batch as its buffers: what a reader thread hands over (see the EventBatch constructor). */
export interface EventBatchParts {
  /** The events' encoded bytes, one after the other, in the first `used` bytes. */
  bytes: ArrayBuffer
  used: number
  /** Float64Array: each event's seq, in the first `count` places. */
  seqs: ArrayBuffer
  /** Uint32Array: where each event's bytes end, in the first `count` places. */
  ends: ArrayBuffer
  count: number
}

/**
 * Events of one read of the log (EventLog.readAll), kept as their encoded bytes in one buffer and
 * decoded one at a time as they are iterated: each iteration decodes afresh, so iterate once.
 *
 * Why bytes: a replay holds a batch of 100,000 events while the next one is read. Held decoded
 * (objects of ~700 bytes each) they outlived the young generation's collections, which copied and
 * promoted every one of them: 3.8 s of scavenges in a replay of 1,000,000 events, more than the
 * projections cost. In one buffer they are nothing to the collector, and each decoded event dies
 * young, right after it is applied.
 * @example
 * const batch = new EventBatch()
 * batch.push(seq, bytes)
 * for (const { seq, event } of batch) apply(event)
 */
export class EventBatch implements Iterable<StoredEvent> {
  #bytes: Uint8Array
  #used: number
  #seqs: Float64Array
  #ends: Uint32Array
  #count: number

  /** An empty batch, or (`parts`) the batch a reader thread built (src/events/read-thread.js), on its transferred buffers. */
  constructor(parts?: EventBatchParts) {
    this.#bytes = parts ? new Uint8Array(parts.bytes) : new Uint8Array(INITIAL_BYTES)
    this.#used = parts?.used ?? 0
    this.#seqs = parts ? new Float64Array(parts.seqs) : new Float64Array(INITIAL_EVENTS)
    this.#ends = parts ? new Uint32Array(parts.ends) : new Uint32Array(INITIAL_EVENTS)
    this.#count = parts?.count ?? 0
  }

  /** How many events the batch holds. */
  get length(): number {
    return this.#count
  }

  /** Seq of the first event (undefined: the batch is empty). */
  get firstSeq(): number | undefined {
    return this.#count === 0 ? undefined : this.#seqs[0]
  }

  /** Seq of the last event (undefined: the batch is empty). */
  get lastSeq(): number | undefined {
    return this.#count === 0 ? undefined : this.#seqs[this.#count - 1]
  }

  /** Add an event's encoded bytes (copied: the caller may reuse its buffer). Seqs must ascend. */
  push(seq: number, bytes: Uint8Array): void {
    const need = this.#used + bytes.length
    if (need > this.#bytes.length) this.#bytes = grown(this.#bytes, need, this.#used)
    if (this.#count === this.#seqs.length) {
      this.#seqs = grown(this.#seqs, this.#count + 1, this.#count)
      this.#ends = grown(this.#ends, this.#count + 1, this.#count)
    }
    this.#bytes.set(bytes, this.#used)
    this.#used = need
    this.#seqs[this.#count] = seq
    this.#ends[this.#count] = need
    this.#count++
  }

  /**
   * The batch's buffers, for a reader thread to fill again (read-in-thread.ts transfers them back):
   * the batch is empty from now on.
   */
  release(): { bytes: ArrayBuffer; seqs: ArrayBuffer; ends: ArrayBuffer } {
    const buffers = { bytes: this.#bytes.buffer as ArrayBuffer, seqs: this.#seqs.buffer as ArrayBuffer, ends: this.#ends.buffer as ArrayBuffer }
    this.#bytes = new Uint8Array(0)
    this.#seqs = new Float64Array(0)
    this.#ends = new Uint32Array(0)
    this.#used = 0
    this.#count = 0
    return buffers
  }

  /**
   * The events in seq order, each decoded as it is reached.
   * @throws EventDecodeError naming the seq of bytes that are not an event
   */
  *[Symbol.iterator](): Iterator<StoredEvent> {
    const bytes = this.#bytes
    let start = 0
    for (let i = 0; i < this.#count; i++) {
      const end = this.#ends[i]!
      const seq = this.#seqs[i]!
      let event: TollgateEvent
      try {
        event = decoder.decode(bytes, start, end)
      } catch (err) {
        throw new EventDecodeError(`event at seq ${seq}: ${(err as Error).message}`, { cause: err })
      }
      yield { seq, event }
      start = end
    }
  }
}

/** A typed array of the same kind at least `need` long (doubling), holding the first `used` items of `array`. */
function grown<A extends Uint8Array | Uint32Array | Float64Array>(array: A, need: number, used: number): A {
  const next = new (array.constructor as new (length: number) => A)(Math.max(need, array.length * 2))
  next.set(array.subarray(0, used))
  return next
}
