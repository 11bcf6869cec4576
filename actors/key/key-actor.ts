import type { Clock } from '../runtime/clock.js'
import { decide, withLimits, type CallKind, type KeyDecision, type KeyLimits, type KeyState } from './decide.js'

/**
 * The actor of one API key: holds its state and applies the decider with the injected clock.
 *
 * `admit` is synchronous and needs no mailbox: the decider does no I/O, so one call runs to
 * completion before the next and nothing can interleave. Messages that await (loading a
 * penalty, publishing) go through a Mailbox in the host.
 *
 * @example
 * const actor = new KeyActor(initialKeyState({ keyId, accountId, limits }, clock.now()), clock)
 * const d = actor.admit('full', 1)
 * if (d.type === 'Rejected') reply429(d.retryAfterMs)
 */
export class KeyActor {
  #state: KeyState
  readonly #clock: Clock

  constructor(state: KeyState, clock: Clock) {
    this.#state = state
    this.#clock = clock
  }

  get state(): KeyState {
    return this.#state
  }

  /** Admit `calls` calls (a batch counts each) to nodes of `kind`, queueing up to `queueMs`. */
  admit(kind: CallKind, calls: number, queueMs = 0): KeyDecision {
    const { state, decision } = decide(this.#state, { type: 'Admit', kind, calls, queueMs }, this.#clock.now())
    this.#state = state
    return decision
  }

  /** The projection changed the key's plan: new limits, bucket levels kept (capped). */
  updateLimits(limits: KeyLimits): void {
    this.#state = withLimits(this.#state, limits, this.#clock.now())
  }
}
