/** The bytes could not be decoded into a known event (corrupt, foreign or from a newer producer). */
export class EventDecodeError extends Error {
  override name = 'EventDecodeError'
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
  }
}

/** The log cannot be reached now (NATS down, stream missing, LMDB closed): try again later. */
export class EventLogUnavailable extends Error {
  override name = 'EventLogUnavailable'
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
  }
}

/** An append to an account's stream found another version than the one its command was decided on. */
export class WrongExpectedVersion extends Error {
  override name = 'WrongExpectedVersion'
  constructor(
    readonly accountId: string,
    readonly expected: number,
    options?: { cause?: unknown },
  ) {
    super(`account ${accountId} is no longer at version ${expected}: another command appended to it; load it again and decide again`, options)
  }
}

/** flush() gave up before the queue emptied (the log stayed unavailable). */
export class OutboxFlushTimeout extends Error {
  override name = 'OutboxFlushTimeout'
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
  }
}

/** publish() after close(): the events are not kept (reported through onError, never thrown). */
export class OutboxClosed extends Error {
  override name = 'OutboxClosed'
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
  }
}
