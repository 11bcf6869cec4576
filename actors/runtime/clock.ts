/**
 * Time, injected. Actors never read Date.now() themselves so that their logic can be driven by
 * a fake clock in tests (a token bucket that refills in real time cannot be tested without sleeps).
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number
}

export const systemClock: Clock = Object.freeze({ now: () => Date.now() })
