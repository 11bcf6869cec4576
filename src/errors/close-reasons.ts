import type { GatewayError } from './registry.js'

/** A close that needs no facts beyond its name. */
type NoFacts = Record<never, never>

/** WebSocket close codes the gateway sends (RFC 6455, 7.4.1; docs/websocket.md). */
export const CLOSE_CODES = Object.freeze({
  /** The gateway is shutting down. */
  GOING_AWAY: 1001,
  /** Policy violation: a slow consumer, a spent notification budget, a key that stopped being valid. */
  POLICY: 1008,
})

/**
 * Why the gateway closes a WebSocket connection, each under a name: its close code, the cause
 * /metrics counts it under (tollgate_ws_closed_total, ws/ws-counters.ts) and the reason the client
 * reads (WsSession.end cuts it at 123 bytes, RFC 6455 5.5). No close answers a registry code of
 * its own: a key or plan that stopped being valid closes with its refusal's words (MESSAGES), the
 * others are limits of a connection, not of a call.
 * @example closing('SHUTTING_DOWN', {}) // { code: 1001, reason: 'The gateway is shutting down; reconnect', cause: 'shutdown' }
 */
export const CLOSE_REASONS = {
  SHUTTING_DOWN: { close: CLOSE_CODES.GOING_AWAY, cause: 'shutdown', text: (_: NoFacts) => 'The gateway is shutting down; reconnect' },
  // The slow-consumer bound (ws/outgoing-turn.ts): the client does not read what it asked for.
  SLOW_CONSUMER_UNREAD: {
    close: CLOSE_CODES.POLICY,
    cause: 'slow-consumer',
    text: (f: { maxBytes: number }) => `Slow consumer: over ${f.maxBytes} bytes unread; read faster`,
  },
  SLOW_CONSUMER_DROPPED: { close: CLOSE_CODES.POLICY, cause: 'slow-consumer', text: (_: NoFacts) => 'Slow consumer: message dropped; read faster' },
  // Notification budgets (ws/notification-charge.ts): the account's across its connections, and the plan's units.
  ACCOUNT_NOTIFICATIONS_SPENT: {
    close: CLOSE_CODES.POLICY,
    cause: 'notification-budget',
    text: (f: { perSecond: number }) => `Notification budget: over ${f.perSecond} units/s (1 per 25 bytes); subscribe once per filter`,
  },
  PLAN_UNITS_SPENT_ON_NOTIFICATIONS: {
    close: CLOSE_CODES.POLICY,
    cause: 'notification-budget',
    text: (f: { perSecond: number; kind: string }) =>
      `Notification budget: the plan's ${f.perSecond} units/s on ${f.kind} nodes are spent; subscribe once per filter`,
  },
  // The admission passed again (ws-session.ts recheck): the key revoked, the plan ended, the token expired, no node left.
  ACCESS_WITHDRAWN: {
    close: CLOSE_CODES.POLICY,
    cause: 'key-invalid',
    text: (f: { refusal: GatewayError }) => f.refusal.message,
  },
} as const satisfies Record<string, { close: number; cause: string; text: (facts: never) => string }>

export type CloseReasonName = keyof typeof CLOSE_REASONS
type CloseFactsOf<N extends CloseReasonName> = Parameters<(typeof CLOSE_REASONS)[N]['text']>[0]

/** A close of a WebSocket connection, ready for WsSession.end: code, reason and the cause /metrics counts. */
export interface Closing {
  readonly code: number
  readonly reason: string
  readonly cause: (typeof CLOSE_REASONS)[CloseReasonName]['cause']
}

/** The close of CLOSE_REASONS `name`, its reason filled with the facts. */
export function closing<N extends CloseReasonName>(name: N, facts: CloseFactsOf<N>): Closing {
  const entry = CLOSE_REASONS[name]
  // Each entry's text takes its own facts; TypeScript cannot narrow the union by name here.
  return { code: entry.close, reason: (entry.text as (facts: CloseFactsOf<N>) => string)(facts), cause: entry.cause }
}
