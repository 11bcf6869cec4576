import { sessionOrder } from '../store/session-order.js'

/**
 * Most live dashboard sessions of one account. A sign-in past it ends the session that expires
 * first: without a bound, every sign-in of a wallet (they cost only a signature) would add a
 * session to the state for the whole session lifetime.
 */
export const MAX_SESSIONS_PER_ACCOUNT = 10

export interface LiveSession {
  sessionHash: string
  expiresAt: number
}

/**
 * The sessions of one account that its sign-in at `time` ends, given all its sessions (the new
 * one included): those expired at `time`, then those that expire first past
 * MAX_SESSIONS_PER_ACCOUNT. A function of the events only (their times, never a clock), so that
 * the account's state, the projection, and a replay of the log all drop the same sessions.
 * @example
 * for (const hash of sessionsEndedBySignIn(sessions, event.time)) remove(hash)
 */
export function sessionsEndedBySignIn(sessions: Iterable<LiveSession>, time: number): string[] {
  const ordered = [...sessions].sort((a, b) => (sessionOrder(a.expiresAt, a.sessionHash) < sessionOrder(b.expiresAt, b.sessionHash) ? -1 : 1))
  const expired = ordered.filter((s) => s.expiresAt <= time)
  const live = ordered.filter((s) => s.expiresAt > time)
  const over = Math.max(0, live.length - MAX_SESSIONS_PER_ACCOUNT)
  return [...expired, ...live.slice(0, over)].map((s) => s.sessionHash)
}
