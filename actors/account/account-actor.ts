import type { Clock } from '../runtime/clock.js'
import { consumedElsewhere, debitUnits, decide, unitsLeft, withLimits, type ChargeDecision, type CallKind, type KeyLimits, type RateState } from './decide.js'
import { dropsUnread, withWsLimits, type WsCommand, type WsDecision, type WsKeyLimits } from './ws-limits.js'

/** What an actor admitted since it was last asked: what the other instances of a fleet must take too. */
export interface Consumption {
  full: number
  archive: number
  /** Compute units admitted by node kind (only while the plan limits units). */
  fullUnits: number
  archiveUnits: number
  messages: number
  connects: number
  /** A WebSocket cooldown or penalty this instance started (0: none): the others apply it too. */
  cooldownUntil: number
  penaltyUntil: number
  /** When the newest of `connects` was made, by the clock of the instance that made it (absent: now). */
  connectedAt?: number
  /**
   * Calls and WebSocket messages refused for a rate: the demand beyond what this instance's bucket
   * held, which tells an account's owner in the fleet that the key presses on its limit.
   */
  refused?: number
}

/** What one charge asks of the account's buckets. */
export interface ChargeAsk {
  /** Calls (a batch counts each; 0: units only, as a call's work known once answered). */
  calls: number
  /** Compute units they cost (0 when not given). */
  units?: number
  /** How long the call may wait for its tokens, ms (0 when not given: answered now or refused). */
  queueMs?: number
}

/**
 * The actor of one account (every key of the account shares it, as they share the plan's limits):
 * holds its rate and connection state and applies the decider with the injected clock. The folder
 * is still called key/: its state and commands were per key before limits became per account.
 *
 * `charge` and `ws` are synchronous and need no mailbox: the decider does no I/O, so one message
 * runs to completion before the next and nothing can interleave (the event loop is the mailbox).
 * What it decided goes out without waiting: decisions and usage are counted by the host and
 * handed to the outbox; penalties from elsewhere come back as commands (WsBlocksRestored,
 * consumedElsewhere), applied as synchronously.
 *
 * @example
 * const actor = new AccountActor(initialRateState({ keyId, accountId, limits }, clock.now()), clock)
 * const d = actor.charge('full', { calls: 1 })
 * if (d.type === 'Rejected') reply429(d.retryAfterMs)
 */
export class AccountActor {
  #state: RateState
  readonly #clock: Clock
  #consumed: Consumption | undefined
  /** Called when the actor charges something after `takeConsumed()` emptied it (once per interval). */
  readonly #onConsumed: ((actor: AccountActor) => void) | undefined

  constructor(state: RateState, clock: Clock, onConsumed?: (actor: AccountActor) => void) {
    this.#state = state
    this.#clock = clock
    this.#onConsumed = onConsumed
  }

  get state(): RateState {
    return this.#state
  }

  /**
   * Charge `ask.calls` calls (a batch counts each) to nodes of `kind`, costing `ask.units` compute
   * units (0 when not given), queueing up to `ask.queueMs` (0: answered now or refused).
   */
  charge(kind: CallKind, ask: ChargeAsk): ChargeDecision {
    const calls = ask.calls
    const units = ask.units ?? 0
    const { state, decision } = decide(this.#state, { type: 'Charge', kind, calls, queueMs: ask.queueMs ?? 0, units }, this.#clock.now())
    this.#state = state
    if (decision.type === 'Admitted') {
      if (decision.limit !== null) this.#consume(kind, calls)
      if (units > 0 && (kind === 'full' ? state.limits.fullUnits : state.limits.archiveUnits) != null)
        this.#consume(kind === 'full' ? 'fullUnits' : 'archiveUnits', units)
    } else if (decision.reason !== 'no-access') this.#consume('refused', calls)
    return decision
  }

  /** Compute units of `kind` the plan has left now (Infinity: the plan sets no units limit): see unitsLeft. */
  unitsLeft(kind: CallKind): number {
    // Most plans set no units limit: answered without reading the clock (this is asked per notification copy).
    if ((kind === 'full' ? this.#state.limits.fullUnits : this.#state.limits.archiveUnits) == null) return Number.POSITIVE_INFINITY
    return unitsLeft(this.#state, kind, this.#clock.now())
  }

  /**
   * Subscription notifications of `kind` delivered, costing `units`: taken from the plan's units
   * per second (in debt if need be, see debitUnits) and shared with the fleet as calls' units are.
   */
  notified(kind: CallKind, units: number): void {
    const limit = kind === 'full' ? this.#state.limits.fullUnits : this.#state.limits.archiveUnits
    if (units <= 0 || limit == null) return
    this.#state = debitUnits(this.#state, kind, units, this.#clock.now())
    this.#consume(kind === 'full' ? 'fullUnits' : 'archiveUnits', units)
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
    if (decision.type === 'WsAccepted') {
      this.#consume('connects', 1)
      this.#consumed!.connectedAt = this.#clock.now()
    } else if (decision.type === 'WsRefused' && decision.reason === 'ws-connection-rate') this.#block('cooldownUntil', decision.until)
    else if (decision.type === 'WsPenaltyStarted') this.#block('penaltyUntil', decision.until)
    else if (decision.type === 'WsMessageAdmitted' && command.type === 'WsMessage') this.#consume('messages', command.calls)
    else if (decision.type === 'WsMessageRejected' && decision.reason === 'ws-messages-throttled' && command.type === 'WsMessage')
      this.#consume('refused', command.calls)
    else if (decision.type === 'WsClosed') this.#consume('connects', 0)
    return decision
  }

  /** Whether the next WebSocket message is dropped whatever it holds (ws-limits.ts, dropsUnread): asked before reading it. */
  wsDropsUnread(): boolean {
    return dropsUnread(this.#state.ws, this.#clock.now())
  }

  /**
   * What this actor admitted since the last call (undefined: nothing), and forget it: the fleet
   * sends it to the other instances. A connection that closed shows as an empty consumption, so
   * that the open count is published too.
   */
  takeConsumed(): Consumption | undefined {
    const consumed = this.#consumed
    this.#consumed = undefined
    return consumed
  }

  /** Take what other instances admitted for this key from its budget (see ConsumedElsewhere). */
  consumedElsewhere(c: Consumption): void {
    const { full, archive, messages, connects, fullUnits, archiveUnits, connectedAt } = c
    this.#state = consumedElsewhere(
      this.#state,
      { type: 'ConsumedElsewhere', full, archive, messages, connects, fullUnits, archiveUnits, connectedAt },
      this.#clock.now(),
    )
    if (c.cooldownUntil > 0 || c.penaltyUntil > 0) this.ws({ type: 'WsBlocksRestored', cooldownUntil: c.cooldownUntil, penaltyUntil: c.penaltyUntil })
  }

  #consume(what: 'full' | 'archive' | 'fullUnits' | 'archiveUnits' | 'messages' | 'connects' | 'refused', n: number): void {
    const c = this.#pending()
    c[what] = (c[what] ?? 0) + n
  }

  #block(what: 'cooldownUntil' | 'penaltyUntil', until: number): void {
    const c = this.#pending()
    c[what] = Math.max(c[what], until)
  }

  #pending(): Consumption {
    if (this.#consumed === undefined) {
      this.#consumed = { full: 0, archive: 0, fullUnits: 0, archiveUnits: 0, messages: 0, connects: 0, cooldownUntil: 0, penaltyUntil: 0, refused: 0 }
      this.#onConsumed?.(this)
    }
    return this.#consumed
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

/** One account's part of what a fleet instance shares: what its actor admitted, and its open connections. */
export interface ConsumedEntry {
  accountId: string
  consumed: Consumption
  open: number
}

/**
 * What each actor of `consumers` (actor -> its account id) admitted since it was last asked
 * (AccountActor.takeConsumed), with its open connections: the entries a fleet instance publishes.
 */
export function takeConsumedOf(consumers: ReadonlyMap<AccountActor, string>): ConsumedEntry[] {
  const out: ConsumedEntry[] = []
  for (const [actor, accountId] of consumers) {
    const consumed = actor.takeConsumed()
    if (consumed !== undefined) out.push({ accountId, consumed, open: actor.wsOpen })
  }
  return out
}
