import type { Consumer, JetStreamClient } from '@nats-io/jetstream'
import { EventLogUnavailable } from '../errors.js'
import { READ_TIMEOUT_MS } from '../read-in-thread.js'
import { withTimeout } from './timed.js'

/** Where an ordered consumer starts: a stream sequence, a subject filter, or both. */
export interface ConsumerStart {
  /** The first stream sequence it delivers (absent: the stream's first). */
  seq?: number
  /** One subject filter, as a string: an array of filters needs nats-server 2.10, Debian ships 2.9. */
  subject?: string
}

/**
 * Every read of the log in one shape: an ordered consumer of the stream from `start`, used by
 * `use`, and deleted after. Ordered consumers are ephemeral, but would linger on the server for
 * minutes: a replay, a projection's follow and each account read would leave one each. `use` may
 * hand over work still running on the consumer (`keep`: a fetch asked for ahead) that must end
 * before it is deleted; the deletion never holds up the caller.
 * Failing to make the consumer (no answer within the read time-out, the stream gone) rejects with
 * EventLogUnavailable; what `use` throws reaches the caller as it is.
 * @example
 * const first = await withOrderedConsumer(conn.js, 'TOLLGATE', { seq: 10 }, async (c) => (await c.next())?.seq)
 */
export async function withOrderedConsumer<T>(
  js: JetStreamClient,
  stream: string,
  start: ConsumerStart,
  use: (consumer: Consumer, keep: (running: Promise<unknown>) => void) => Promise<T>,
): Promise<T> {
  let consumer: Consumer
  try {
    const config = {
      ...(start.subject === undefined ? {} : { filter_subjects: start.subject }),
      ...(start.seq === undefined ? {} : { opt_start_seq: start.seq }),
    }
    consumer = await withTimeout(js.consumers.get(stream, config), READ_TIMEOUT_MS, 'read')
  } catch (cause) {
    throw cause instanceof EventLogUnavailable ? cause : new EventLogUnavailable(`cannot read stream ${stream}`, { cause })
  }
  const running: Promise<unknown>[] = []
  try {
    return await use(consumer, (work) => running.push(work))
  } finally {
    void Promise.allSettled(running).then(() => consumer.delete().catch(() => undefined))
  }
}
