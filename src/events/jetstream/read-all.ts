import type { Consumer, JetStreamClient } from '@nats-io/jetstream'
import { EventBatch } from '../event-batch.js'
import { EventLogUnavailable } from '../errors.js'
import { READ_TIMEOUT_MS } from '../read-in-thread.js'
import { withOrderedConsumer } from './ordered-consumer.js'
import { withTimeout } from './timed.js'

/**
 * Most messages asked for in one fetch of readAll (each fetch must end within READ_TIMEOUT_MS).
 * An ordered consumer takes one fetch at a time, and each waits a round trip for the server to
 * start sending: at 5,000 a fetch, a replay of 1,000,000 events waited 1.4 s of its 19; at 20,000, 0.7 s.
 */
export const FETCH_MAX = 20_000

export interface ReadAllRange {
  stream: string
  /** First stream sequence to read (at least 1). */
  first: number
  /** Last stream sequence to read. */
  to: number
  /** Events per batch handed to onBatch. */
  batch: number
  /** The stream's last sequence now: an empty fetch asks whether the stream ends before `to`. */
  lastSeq: () => Promise<number>
}

/**
 * The events of `range` in batches, on this thread (a long range reads in a worker thread
 * instead: read-in-thread.ts): fetches of a few thousand on one ordered consumer (it goes on where
 * the last one stopped). The next fetch is asked for before onBatch runs, so that the server sends
 * while the batch is applied, yet memory never holds more than a batch and one fetch (consume()
 * would keep pulling however long onBatch takes). A fetch adds to the batch being filled when it runs.
 * @returns the last sequence handed to onBatch (first − 1 when none)
 */
export function readAllInBatches(js: JetStreamClient, range: ReadAllRange, onBatch: (batch: EventBatch) => Promise<void> | void): Promise<number> {
  const { stream, first, to, batch } = range
  return withOrderedConsumer(js, stream, { seq: first }, async (consumer, keep) => {
    let last = first - 1
    const fetchNext = (into: EventBatch, after: number, room: number): Promise<Fetched> => {
      const fetched = fetchInto(consumer, into, Math.min(FETCH_MAX, room, to - after))
      fetched.catch(() => undefined) // awaited later, after onBatch: not an unhandled rejection meanwhile
      // A fetch still running when onBatch failed: the consumer is deleted once it ends.
      keep(fetched)
      return fetched
    }
    let events = new EventBatch()
    let next = fetchNext(events, last, batch)
    let empty = 0
    for (;;) {
      // Timed from when we wait, not from when it was asked for: onBatch may take long.
      const got = await withTimeout(next, READ_TIMEOUT_MS, 'read').catch((cause: unknown) => {
        if (cause instanceof EventLogUnavailable) throw cause
        throw new EventLogUnavailable(`cannot read stream ${stream}`, { cause })
      })
      const seq = events.lastSeq ?? last
      // An empty fetch: its request expired while we were busy, or the stream ends before `to`.
      empty = got.count === 0 ? empty + 1 : 0
      const end = seq >= to || got.atEnd || (empty > 0 && (await range.lastSeq()) <= seq)
      if (empty >= 3) throw new EventLogUnavailable(`stream ${stream} sent nothing after seq ${seq} in three fetches although it holds more`)
      const full = events.length >= batch
      const ready = full || (end && events.length > 0) ? events : undefined
      if (ready !== undefined) events = new EventBatch()
      if (!end) next = fetchNext(events, seq, full ? batch : batch - events.length)
      if (ready !== undefined) {
        await onBatch(ready)
        last = seq
      }
      if (end) return last
    }
  })
}

/** What one fetch got. */
interface Fetched {
  /** How many events it added to the batch. */
  count: number
  /** The stream had no message after the last one. */
  atEnd: boolean
}

/** Up to `n` messages from the consumer, added to `into`; `atEnd`: the stream had none after the last one. */
async function fetchInto(consumer: Consumer, into: EventBatch, n: number): Promise<Fetched> {
  const messages = await consumer.fetch({ max_messages: n, expires: READ_TIMEOUT_MS / 2 })
  let count = 0
  let atEnd = false
  for await (const m of messages) {
    into.push(m.seq, m.data)
    count++
    atEnd = m.info.pending === 0
    if (count >= n || atEnd) break
  }
  return { count, atEnd }
}
