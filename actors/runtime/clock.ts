/**
 * Time, injected. Actors never read Date.now() themselves so that their logic can be driven by
 * a fake clock in tests (a token bucket that refills in real time cannot be tested without sleeps).
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number
}

export const systemClock: Clock = Object.freeze({ now: () => Date.now() })

/** A clock that only moves when told to. */
export class FakeClock implements Clock {
  #now: number
  constructor(start = 1_700_000_000_000) {
    this.#now = start
  }
  now(): number {
    return this.#now
  }
  advance(ms: number): number {
    this.#now += ms
    return this.#now
  }
  set(ms: number): void {
    this.#now = ms
  }
}
