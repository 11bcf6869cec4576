import { DiscardPolicy, JetStreamApiError, RetentionPolicy, StorageType, type JetStreamManager } from '@nats-io/jetstream'
import { nanos } from '@nats-io/transport-node'
import { STREAM_NOT_FOUND, StreamMismatch } from './errors.js'

/** Where the log's events live: the stream, the subjects under it, and how many copies the cluster keeps. */
export interface StreamOptions {
  /** JetStream stream name, created on start if missing. */
  stream: string
  /** Events go to `<prefix>.<category>.<type>`; the stream holds `<prefix>.>`. */
  subjectPrefix: string
  /** Stream replicas when this call creates the stream (1 on a single server, 3 in a cluster). */
  replicas: number
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
  try {
    const info = await jsm.streams.info(opts.stream)
    if (!info.config.subjects?.includes(subject)) {
      throw new StreamMismatch(
        `stream ${opts.stream} exists with subjects ${JSON.stringify(info.config.subjects)}, not ${subject}: ` + 'fix events.stream or events.subjectPrefix',
      )
    }
    return
  } catch (err) {
    if (!(err instanceof JetStreamApiError && err.code === STREAM_NOT_FOUND)) throw err
  }
  try {
    await jsm.streams.add({
      name: opts.stream,
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
