import type { Clock } from '../runtime/clock.js'
import { decide, withLimits, type AdmitDecision, type CallKind, type KeyLimits, type KeyState } from './decide.js'
import { withWsLimits, type WsCommand, type WsDecision, type WsKeyLimits } from './ws-limits.js'

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
  admit(kind: CallKind, calls: number, queueMs = 0): AdmitDecision {
    const { state, decision } = decide(this.#state, { type: 'Admit', kind, calls, queueMs }, this.#clock.now())
    this.#state = state
    return decision
  }

  /**
   * A WebSocket command: a connection opening or closing, a message arriving, bad messages
   * counted, or a cooldown or penalty restored from the projection (see ws-limits.ts).
   * @example
   * const d = actor.ws({ type: 'WsConnect' })
   * if (d.type === 'WsRefused') refuseUpgrade(d.reason, d.retryAfterMs)
   */
  ws(command: WsCommand): WsDecision {
    const { state, decision } = decide(this.#state, command, this.#clock.now())
    this.#state = state
    return decision
  }

  /** Connections open on this instance: while any is, the actor must not be passivated. */
  get wsOpen(): number {
    return this.#state.ws.open
  }

  /** The projection changed the key's plan: new limits, bucket levels kept (capped). */
  updateLimits(limits: KeyLimits, ws?: WsKeyLimits): void {
    const now = this.#clock.now()
    this.#state = withLimits(this.#state, limits, now)
    if (ws !== undefined) this.#state = { ...this.#state, ws: withWsLimits(this.#state.ws, ws, now) }
  }
}
