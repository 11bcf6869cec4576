/** The log does not hold the events the store needs next (a gap, or a store built from another log). */
export class ProjectionGap extends Error {
  override name = 'ProjectionGap'
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
  }
}

/** The store has applied events the log does not have: it was built from another log. */
export class ProjectionAheadOfLog extends Error {
  override name = 'ProjectionAheadOfLog'
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
  }
}

/** The store skipped usage events (usage.project false) and is opened to project usage: it must be rebuilt first. */
export class UsageNotInStore extends Error {
  override name = 'UsageNotInStore'
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
  }
}
