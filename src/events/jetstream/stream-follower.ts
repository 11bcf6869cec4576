import type { Consumer, ConsumerMessages } from '@nats-io/jetstream'
import { BatchDecoder } from '../batch-decoder.js'
import { type Follower, retryPauseMs } from '../follow-loop.js'
import type { StoredEvent } from '../types.js'
import type { JetStreamConnection } from './connection.js'

/**
 * Decodes what the server sends, as a replay does: every event of a fleet's usage reaches every
 * instance's follower, and its short strings (account, key, instance, network) are the same few
 * from one event to the next, so they are interned instead of made afresh per event. One for the
 * thread (BatchDecoder's table is about 1.2 MB), shared by its followers (one per usage partition):
 * decoding is synchronous. Made on first use.
 */
let decoder: BatchDecoder | undefined

export interface StreamFollowerOptions {
  stream: string
  /** First stream sequence to hand over. */
  from: number
  /** Most events in one batch, and in one fetch. */
  batch: number
  /**
   * How long one fetch waits for the events it asked for. The server sends each event as it is
   * appended, so this bounds nothing a caller sees: when the stream is quiet, the follower asks
   * again this often (and the client checks the server's heartbeats at half of it).
   */
  fetchExpiresMs: number
  /** The connection now; throws EventLogUnavailable while there is none. */
  connection: () => JetStreamConnection
  onBatch: (batch: StoredEvent[]) => Promise<void>
  /** Told about failures retried (a batch rejected by onBatch, a consumer that could not be made or failed). */
  onError?: (err: unknown) => void
}

/**
 * A follower of a stream on one ordered consumer that lives as long as it does: the server sends
 * each event once, as it is appended, and the follower hands over what has come as one batch
 * (everything the server had sent when the last of it arrived, at most `batch`). It replaced a read
 * per append: every append anywhere in the fleet woke every follower through a subscription to the
 * stream's subjects (the event delivered a first time), and each wake-up asked for the stream's
 * state, made an ordered consumer, fetched the event (a second time), and deleted the consumer:
 * about four requests to the server, on every instance, for every append of every instance.
 *
 * Memory holds at most one fetch (`batch` events): the next is asked for only after the last batch
 * was handed over. A batch onBatch rejects is handed over again with backoff, and nothing after it
 * is, so a projection that fails to commit skips nothing. A fetch that fails (the connection lost,
 * the consumer gone, the heartbeats missed) makes the consumer again from the next sequence.
 */
export class StreamFollower implements Follower {
  readonly #opts: StreamFollowerOptions
  #next: number
  #stopped = false
  #done: Promise<void> = Promise.resolve()
  #consumer: Consumer | undefined
  #fetch: ConsumerMessages | undefined
  /** Ends a retry's pause at once (on stop). */
  #wake: (() => void) | undefined

  constructor(opts: StreamFollowerOptions) {
    this.#opts = opts
    this.#next = Math.max(1, opts.from)
  }

  start(): void {
    this.#done = this.#run()
  }

  /**
   * The connection came back (or was made late): the fetch under way may be on a connection that
   * is gone, or on a server that lost the consumer; start again from the next sequence.
   */
  wake(): void {
    this.#drop()
    this.#wake?.()
  }

  /** Stop after the batch in progress settles; resolves when the follower has ended. */
  async stop(): Promise<void> {
    this.#stopped = true
    this.#fetch?.stop()
    this.#wake?.()
    await this.#done
    this.#drop()
  }

  async #run(): Promise<void> {
    let failures = 0
    while (!this.#stopped) {
      try {
        this.#consumer ??= await this.#makeConsumer()
        if (this.#stopped) break
        await this.#fetchOnce(this.#consumer)
        failures = 0
      } catch (err) {
        if (this.#stopped) break
        this.#opts.onError?.(err)
        this.#drop()
        failures += 1
        await this.#pause(failures)
      }
    }
  }

  async #makeConsumer(): Promise<Consumer> {
    const { js } = this.#opts.connection()
    return js.consumers.get(this.#opts.stream, { opt_start_seq: this.#next })
  }

  /** One fetch: each batch handed over as soon as the server has no more ready behind it. */
  async #fetchOnce(consumer: Consumer): Promise<void> {
    const { batch: max, fetchExpiresMs } = this.#opts
    const messages = await consumer.fetch({ max_messages: max, expires: fetchExpiresMs })
    this.#fetch = messages
    try {
      let batch: StoredEvent[] = []
      for await (const m of messages) {
        // An ordered consumer made again after a failure starts at #next: nothing before it comes twice.
        if (m.seq < this.#next) continue
        batch.push({ seq: m.seq, event: (decoder ??= new BatchDecoder()).decode(m.data, 0, m.data.length) })
        // The server has no more (pending), and none has come in that is not handed over yet: the
        // events of one socket read arrive together, and go in one batch (one transaction).
        if ((m.info.pending === 0 && messages.getPending() === 0) || batch.length >= max) {
          await this.#handOver(batch)
          batch = []
        }
        if (this.#stopped) return
      }
      if (batch.length > 0) await this.#handOver(batch)
    } finally {
      if (this.#fetch === messages) this.#fetch = undefined
    }
  }

  /** onBatch until it takes the batch (or the follower stops); the next sequence moves past it. */
  async #handOver(batch: StoredEvent[]): Promise<void> {
    let failures = 0
    while (!this.#stopped) {
      try {
        await this.#opts.onBatch(batch)
        this.#next = batch[batch.length - 1]!.seq + 1
        return
      } catch (err) {
        this.#opts.onError?.(err)
        failures += 1
        await this.#pause(failures)
      }
    }
  }

  #pause(failures: number): Promise<void> {
    if (this.#stopped) return Promise.resolve()
    const ms = retryPauseMs(failures)
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms)
      function done(): void {
        clearTimeout(timer)
        resolve()
      }
      this.#wake = () => {
        this.#wake = undefined
        done()
      }
    })
  }

  /** Forget the consumer (deleted on the server where it can be: an ordered consumer lingers there for minutes otherwise). */
  #drop(): void {
    const consumer = this.#consumer
    this.#consumer = undefined
    this.#fetch?.stop()
    if (consumer !== undefined) void consumer.delete().catch(() => undefined)
  }
}
