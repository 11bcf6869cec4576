import { decodeEvent, EventDecodeError } from './codec.js'
import type { StoredEvent } from './types.js'

/** First size of a batch's buffer; it doubles as events come (an event is ~250 bytes). */
const INITIAL_BYTES = 256 * 1024

/**
 * Events of one read of the log (EventLog.readAll), kept as their encoded bytes in one buffer and
 * decoded one at a time as they are iterated: each iteration decodes afresh, so iterate once.
 *
 * Why bytes: a replay holds a batch of 20,000 events while the next one is read. Held decoded
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
  #bytes = Buffer.allocUnsafe(INITIAL_BYTES)
  #used = 0
  /** Seq of each event, and where its bytes end in #bytes (plain number arrays: no object per event). */
  readonly #seqs: number[] = []
  readonly #ends: number[] = []

  /** How many events the batch holds. */
  get length(): number {
    return this.#seqs.length
  }

  /** Seq of the first event (undefined: the batch is empty). */
  get firstSeq(): number | undefined {
    return this.#seqs[0]
  }

  /** Seq of the last event (undefined: the batch is empty). */
  get lastSeq(): number | undefined {
    return this.#seqs[this.#seqs.length - 1]
  }

  /** Add an event's encoded bytes (copied: the caller may reuse its buffer). Seqs must ascend. */
  push(seq: number, bytes: Uint8Array): void {
    const need = this.#used + bytes.length
    if (need > this.#bytes.length) {
      const grown = Buffer.allocUnsafe(Math.max(need, this.#bytes.length * 2))
      this.#bytes.copy(grown, 0, 0, this.#used)
      this.#bytes = grown
    }
    this.#bytes.set(bytes, this.#used)
    this.#used = need
    this.#seqs.push(seq)
    this.#ends.push(need)
  }

  /**
   * The events in seq order, each decoded as it is reached.
   * @throws EventDecodeError naming the seq of bytes that are not an event
   */
  *[Symbol.iterator](): Iterator<StoredEvent> {
    const bytes = this.#bytes
    let start = 0
    for (let i = 0; i < this.#seqs.length; i++) {
      const end = this.#ends[i]!
      const seq = this.#seqs[i]!
      let event
      try {
        event = decodeEvent(bytes.subarray(start, end))
      } catch (err) {
        throw new EventDecodeError(`event at seq ${seq}: ${(err as Error).message}`, { cause: err })
      }
      yield { seq, event }
      start = end
    }
  }
}
