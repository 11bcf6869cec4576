import { AccountActor } from '../../actors/account/account-actor.js'
import { initialRateState, type KeyDecision, type KeyLimits } from '../../actors/account/decide.js'
import { DEFAULT_WS_KEY_LIMITS, type WsCommand, type WsDecision, type WsKeyLimits } from '../../actors/account/ws-limits.js'
import { FakeClock } from './fake-clock.js'

/**
 * given / when / then for a decider over events: `given(...events)` folds the events so far into
 * its state, `.when(command)` decides, and `.decided()` is the events decided (a refusal throws,
 * failing the test) or `.refused()` the refusal (undefined when it decided).
 * @example
 * const given = eventDecider({ fold: (events) => foldAccount(A, events), decide: (c, s) => decide(c, s, { catalog }) })
 * t.same(given(created).when(open).decided(), [])
 */
export function eventDecider<S, C, E>(decider: { fold: (events: E[]) => S; decide: (command: C, state: S) => E[] }) {
  return (...events: E[]) => {
    const state = decider.fold(events)
    return {
      state,
      when(command: C) {
        return {
          decided: (): E[] => decider.decide(command, state),
          refused: (): (Error & { code?: string }) | undefined => {
            try {
              decider.decide(command, state)
            } catch (err) {
              return err as Error & { code?: string }
            }
            return undefined
          },
        }
      },
    }
  }
}

/**
 * given a fresh account's actor with these call limits (and the spec's WebSocket limits, or those
 * given), on a clock that moves only when the test says, after the WebSocket commands of `history`:
 * when/then happen on the actor it returns.
 * @example
 * const { actor, clock, admitMany } = accountActor({ full: 500, archive: 250 })
 * const { wsMany } = accountActor({ full: 500, archive: 250 }, { history: [{ type: 'WsConnect' }] })
 */
export function accountActor(limits: KeyLimits, opts: { ws?: Partial<WsKeyLimits>; history?: readonly WsCommand[] } = {}) {
  const clock = new FakeClock()
  const ws = { ...DEFAULT_WS_KEY_LIMITS, ...opts.ws }
  const actor = new AccountActor(initialRateState({ keyId: 'key_a', accountId: 'acc_a', limits, ws }, clock.now()), clock)
  for (const command of opts.history ?? []) actor.ws(command)
  return {
    clock,
    actor,
    /** `n` calls of `kind`, one at a time: each one's decision. */
    admitMany: (kind: 'full' | 'archive', n: number): KeyDecision[] => Array.from({ length: n }, () => actor.charge(kind, { calls: 1 })),
    /** The same WebSocket command `n` times: each one's decision. */
    wsMany: (n: number, command: WsCommand): WsDecision[] => Array.from({ length: n }, () => actor.ws(command)),
  }
}
