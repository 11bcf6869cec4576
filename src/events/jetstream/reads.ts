import { JetStreamApiError } from '@nats-io/jetstream'
import { decodeEvent } from '../codec.js'
import { READ_TIMEOUT_MS } from '../read-in-thread.js'
import type { StoredEvent } from '../types.js'
import type { JetStreamConnection } from './connection.js'
import { NO_MESSAGE } from './errors.js'
import { withOrderedConsumer } from './ordered-consumer.js'

/** Most events asked for in one fetch of a subject's read (an account's events). */
const SUBJECT_FETCH = 1000

/** Up to `limit` events from stream sequence `from` on (the follow loop's and `read`'s reads). */
export async function readRange(conn: JetStreamConnection, stream: string, from: number, limit: number): Promise<StoredEvent[]> {
  const { state } = await conn.jsm.streams.info(stream)
  const first = Math.max(from, state.first_seq)
  // Ask for exactly what exists: a fetch for more would wait its whole expiry at the end.
  const wanted = Math.min(limit, state.last_seq - first + 1)
  if (wanted <= 0) return []
  return withOrderedConsumer(conn.js, stream, { seq: first }, async (consumer) => {
    const messages = await consumer.fetch({ max_messages: wanted, expires: READ_TIMEOUT_MS / 2 })
    const out: StoredEvent[] = []
    for await (const m of messages) {
      out.push({ seq: m.seq, event: decodeEvent(m.data) })
      if (out.length >= wanted) break
    }
    return out
  })
}

/**
 * Every message on `subject` (a filter) past seq `after`, in order. `exact`: the subject is one
 * subject (no wildcard): its last message says whether there is anything new before a consumer is made.
 */
export async function readSubject(conn: JetStreamConnection, stream: string, subject: string, exact: boolean, after = 0): Promise<StoredEvent[]> {
  let last: number
  if (exact) {
    const msg = await conn.jsm.streams.getMessage(stream, { last_by_subj: subject }).catch((err: unknown) => {
      if (err instanceof JetStreamApiError && err.code === NO_MESSAGE) return null
      throw err
    })
    if (msg === null || msg.seq <= after) return []
    last = msg.seq
  } else {
    last = (await conn.jsm.streams.info(stream)).state.last_seq
  }
  return withOrderedConsumer(conn.js, stream, { subject, seq: after > 0 ? after + 1 : undefined }, async (consumer) => {
    const out: StoredEvent[] = []
    for (;;) {
      const { num_pending: pending } = await consumer.info(true)
      if (pending === 0) break
      const messages = await consumer.fetch({ max_messages: Math.min(pending, SUBJECT_FETCH), expires: READ_TIMEOUT_MS / 2 })
      let got = 0
      for await (const m of messages) {
        out.push({ seq: m.seq, event: decodeEvent(m.data) })
        got++
        if (got >= Math.min(pending, SUBJECT_FETCH) || m.seq >= last) break
      }
      if (got === 0 || out.at(-1)!.seq >= last) break
    }
    return out
  })
}
