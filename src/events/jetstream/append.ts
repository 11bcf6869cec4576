import { JetStreamApiError, type JetStreamClient } from '@nats-io/jetstream'
import { encodeEvent } from '../codec.js'
import { EventLogUnavailable, WrongExpectedVersion } from '../errors.js'
import { accountStreamSubject, subjectOf, type TollgateEvent } from '../types.js'
import { WRONG_LAST_SEQUENCE } from './errors.js'

/** Where and how appends are published. */
export interface AppendOptions {
  stream: string
  subjectPrefix: string
  /** Usage partitions (events.partitions): where usage events go (see subjectOf). */
  partitions: number
  /** Longest wait for one acknowledgement, in ms. */
  timeoutMs: number
}

/** Publishes in flight at once: pipelining makes a 5,000-event append ~50× faster than one by one. */
const PUBLISH_WINDOW = 256

/**
 * Publish `events` in order, each to its subject with `msgID: event.id` (a re-sent event is
 * acknowledged as a duplicate and stored once, within the stream's duplicate window).
 * @throws EventLogUnavailable when an event is not acknowledged (none after it is sent)
 */
export async function appendEvents(js: JetStreamClient, events: readonly TollgateEvent[], opts: AppendOptions): Promise<void> {
  const { subjectPrefix, timeoutMs, partitions } = opts
  // A sliding window: the next publish goes out as soon as one of the window is acknowledged.
  // One connection delivers publishes in order, so the stream stores them in order.
  const inFlight = new Set<Promise<void>>()
  let failure: { cause: unknown } | undefined
  for (const event of events) {
    if (failure !== undefined) break
    const ack: Promise<void> = js.publish(subjectOf(event, subjectPrefix, partitions), encodeEvent(event), { msgID: event.id, timeout: timeoutMs }).then(
      () => void inFlight.delete(ack),
      (cause: unknown) => {
        inFlight.delete(ack)
        failure ??= { cause }
      },
    )
    inFlight.add(ack)
    if (inFlight.size >= PUBLISH_WINDOW) await Promise.race(inFlight)
  }
  await Promise.all(inFlight)
  if (failure !== undefined) {
    throw new EventLogUnavailable(`JetStream did not acknowledge an append to ${opts.stream}`, { cause: failure.cause })
  }
}

/**
 * Publish a command's events, those of the account's own subject expecting the sequence the
 * previous one got (`expectedVersion` first): an optimistic append to the account's stream.
 * @returns the account stream's new version
 * @throws WrongExpectedVersion when another command appended first / EventLogUnavailable
 */
export async function appendToAccountSubject(
  js: JetStreamClient,
  accountId: string,
  events: readonly TollgateEvent[],
  expectedVersion: number,
  opts: AppendOptions,
): Promise<number> {
  const { subjectPrefix, timeoutMs, partitions } = opts
  const subject = accountStreamSubject(accountId, subjectPrefix)
  let version = expectedVersion
  // One by one, each expecting the sequence the previous one got: a command that raced another
  // fails on its first event, before anything of it is stored. (nats-server 2.9 has no atomic
  // batch: a command cut between two of its events leaves the first ones; the deciders finish
  // such a command when it is decided again, see ConfirmPayment.)
  for (const event of events) {
    const own = subjectOf(event, subjectPrefix, partitions) === subject
    try {
      const ack = await js.publish(subjectOf(event, subjectPrefix, partitions), encodeEvent(event), {
        msgID: event.id,
        timeout: timeoutMs,
        ...(own ? { expect: { lastSubjectSequence: version } } : {}),
      })
      // A duplicate is not checked against the expected sequence by the server: an event with
      // this id was appended by another command since our version, so this one is stale too.
      if (own && ack.duplicate) throw new WrongExpectedVersion(accountId, version)
      if (own) version = ack.seq
    } catch (cause) {
      if (cause instanceof WrongExpectedVersion) throw cause
      if (cause instanceof JetStreamApiError && cause.code === WRONG_LAST_SEQUENCE) throw new WrongExpectedVersion(accountId, version, { cause })
      throw new EventLogUnavailable(`JetStream did not acknowledge an append to ${opts.stream}`, { cause })
    }
  }
  return version
}
