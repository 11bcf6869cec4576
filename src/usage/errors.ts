/** The store cannot answer the query exactly: it says why and what to do instead. */
export class UsageReportError extends Error {
  override name = 'UsageReportError'
}

/**
 * This instance does not project usage (usage.project false) and no instance that does answered
 * its ask (src/usage/usage-answers.ts): none runs on the stream, none answered in time, NATS is
 * away, or too many asks wait already.
 */
export class UsageUnavailable extends Error {
  override name = 'UsageUnavailable'
  constructor(readonly reason: 'no answer' | 'too many asks' | 'not connected' | 'closing') {
    super(`usage unavailable: ${reason}`)
  }
}
