import { Type, type Static } from '@sinclair/typebox'
import { Strict } from './json-schema.js'

/**
 * The WebSocket limits of one API key (the spec's Limits table), declared once: the configuration's
 * `ws` section holds them beside the limits of one connection (schemas/config.ts), and the key
 * actor enforces them under the same names (actors/account/ws-limits.ts).
 */
export const wsKeyLimitsSchema = Strict({
  maxConnectionsPerKey: Type.Integer({
    minimum: 1,
    default: 50,
    description: 'Open connections per key on one instance; the next is refused (429).',
  }),
  newConnectionsPerSecond: Type.Integer({
    minimum: 1,
    default: 15,
    description: 'New connections per key within any second; one more starts the cooldown.',
  }),
  cooldownMs: Type.Integer({
    minimum: 1,
    default: 60000,
    description: 'How long new connections of a key are blocked after too many in one second.',
  }),
  messagesPerSecond: Type.Integer({
    minimum: 1,
    default: 500,
    description:
      "Messages per second per key across its connections (each call of a batch counts); capped by the plan's full-node rps, " +
      'unlimited for unlimited plans.',
  }),
  tolerance: Type.Number({
    minimum: 0,
    maximum: 1,
    default: 0.1,
    description: 'Traffic up to this fraction above messagesPerSecond is still served.',
  }),
  badMessages: Type.Integer({
    minimum: 1,
    default: 20,
    description: 'Malformed or unsupported messages tolerated per badMessagesWindowMs; one more imposes the penalty.',
  }),
  badMessagesWindowMs: Type.Integer({ minimum: 1, default: 60000, description: 'The window in which badMessages are counted.' }),
  penaltyMs: Type.Integer({ minimum: 1, default: 300000, description: 'How long messages of a key are refused after the penalty.' }),
})

export type WsKeyLimitsConfig = Static<typeof wsKeyLimitsSchema>
