/**
 * What JetStream's API answers that the log acts on, and the one error of its own: the codes are
 * JetStream's (`JetStreamApiError.code`), named here once for every file of the log.
 */

/** Stream not found. */
export const STREAM_NOT_FOUND = 10059
/** An append's expected last subject sequence was not the subject's last sequence. */
export const WRONG_LAST_SEQUENCE = 10071
/** No message matched a get (an account without events). */
export const NO_MESSAGE = 10037

/** The existing stream does not hold the configured subjects: a configuration error, not an outage. */
export class StreamMismatch extends Error {
  override name = 'StreamMismatch'
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
  }
}
