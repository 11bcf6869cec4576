import type { Clock } from '../../actors/runtime/clock.js'

/** A clock that only moves when told to: the test double of actors/runtime/clock.ts's Clock. */
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
