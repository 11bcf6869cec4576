import { DiscardPolicy, JetStreamApiError, RetentionPolicy, StorageType, type JetStreamManager, type StreamInfo } from '@nats-io/jetstream'
import { nanos } from '@nats-io/transport-node'
import { partitionDescription, partitionsOfDescription, partitionStream } from '../partitions.js'
import { STREAM_NOT_FOUND, StreamMismatch } from './errors.js'

/** Where the log's events live: the stream, the subjects under it, and how many copies the cluster keeps. */
export interface StreamOptions {
  /** JetStream stream name, created on start if missing. */
  stream: string
  /** Events go to `<prefix>.<category>.<type>`; the stream holds `<prefix>.>`. */
  subjectPrefix: string
  /** Stream replicas when this call creates the stream (1 on a single server, 3 in a cluster). */
  replicas: number
  /**
   * The log's usage partitions (events.partitions, default 1). With `partition`, this stream is
   * partition `partition` of them (its description says so); without, it is the log's main stream,
   * and the partitions found beside it must be as many.
   */
  partitions?: number
  partition?: number
}

/**
 * JetStream deduplicates a msgID seen within this window. An event re-sent later than this
 * after its first append would be stored twice; the outbox re-sends what it holds within seconds
 * of NATS coming back, and what was acknowledged at most 2 minutes before (its resend window, in
 * case the servers lost it), so ten minutes covers both with room for clocks that disagree.
 */
const DUPLICATE_WINDOW_MS = 10 * 60 * 1000

/**
 * Make sure the stream exists and holds `<prefix>.>`: created when missing (file storage, never
 * dropping old events), refused with StreamMismatch when it exists with other subjects.
 */
export async function ensureStream(jsm: JetStreamManager, opts: StreamOptions): Promise<void> {
  const subject = `${opts.subjectPrefix}.>`
  const partitions = opts.partitions ?? 1
  const description = opts.partition === undefined ? undefined : partitionDescription(opts.partition, partitions)
  const found = await streamInfo(jsm, opts.stream)
  if (found !== undefined) {
    if (!found.config.subjects?.includes(subject)) {
      throw new StreamMismatch(
        `stream ${opts.stream} exists with subjects ${JSON.stringify(found.config.subjects)}, not ${subject}: ` + 'fix events.stream or events.subjectPrefix',
      )
    }
    if (description !== undefined && found.config.description !== description) {
      throw partitionsChanged(opts.stream, partitionsOfDescription(found.config.description), partitions)
    }
    if (opts.partition === undefined) await checkPartitions(jsm, opts, partitions)
    return
  }
  try {
    await jsm.streams.add({
      name: opts.stream,
      ...(description === undefined ? {} : { description }),
      subjects: [subject],
      storage: StorageType.File,
      retention: RetentionPolicy.Limits,
      // The log is the source of truth: never drop old events to make room.
      discard: DiscardPolicy.New,
      num_replicas: opts.replicas,
      duplicate_window: nanos(DUPLICATE_WINDOW_MS),
    })
  } catch (err) {
    // Another instance may have created it between our info and add: fine if it exists now.
    await jsm.streams.info(opts.stream).catch(() => {
      throw err
    })
  }
}

async function streamInfo(jsm: JetStreamManager, stream: string, subjectsFilter?: string): Promise<StreamInfo | undefined> {
  try {
    return await jsm.streams.info(stream, subjectsFilter === undefined ? undefined : { subjects_filter: subjectsFilter })
  } catch (err) {
    if (err instanceof JetStreamApiError && err.code === STREAM_NOT_FOUND) return undefined
    throw err
  }
}

/**
 * The main stream's usage is where `partitions` says: an account's usage in one place, in order.
 * Usage written with another P would be split between two layouts (an account's usage in two
 * streams, read in no defined order): refused, saying what to do. Partition 0 says which P the
 * partitions were made for (every partition's description says it).
 */
async function checkPartitions(jsm: JetStreamManager, opts: StreamOptions, partitions: number): Promise<void> {
  const first = await streamInfo(jsm, partitionStream(opts.stream, 0))
  if (first !== undefined) {
    const before = partitionsOfDescription(first.config.description)
    if (before !== partitions) throw partitionsChanged(opts.stream, before, partitions)
    return
  }
  if (partitions === 1) return
  // No partition yet: the first start with P > 1. Usage the main stream holds was written with P = 1.
  const usage = await streamInfo(jsm, opts.stream, `${opts.subjectPrefix}.usage.>`)
  if (Object.keys(usage?.state.subjects ?? {}).length > 0) throw partitionsChanged(opts.stream, 1, partitions)
}

function partitionsChanged(stream: string, before: number | undefined, now: number): StreamMismatch {
  const was = before === undefined ? 'another number of partitions' : `events.partitions ${before}`
  return new StreamMismatch(
    `the usage of stream ${stream} was written with ${was}, and this configuration says events.partitions ${now}: ` +
      "an account's usage would be split between two layouts. Set events.partitions back to " +
      (before === undefined ? 'what it was' : String(before)) +
      ', or start a new log with the new value (another events.stream and events.subjectPrefix, replayed into a new dataDir)',
  )
}
