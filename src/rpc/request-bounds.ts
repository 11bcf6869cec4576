/**
 * Bounds on what a request may hold, shared by the two ways a body is read (parse.ts, and
 * common-layout.ts for the layout every client library writes).
 */

/**
 * The longest id accepted, as sent (its JSON text, quotes included). An id only pairs an answer
 * with its request; without a bound a client could make every error answer (and every log line
 * that quotes one) as large as its body.
 */
export const MAX_ID_LENGTH = 256

/**
 * How deep `params` may nest. No Ethereum method needs more than about ten levels
 * (eth_simulateV1 with state overrides); without a bound, params nested 100,000 deep reached the
 * upstream call, whose JSON.stringify overflowed the stack: the call failed as if the node had
 * (502), and counted against the node's health.
 */
export const MAX_PARAMS_DEPTH = 64

/** Whether `value` holds objects or arrays more than `levels` deep (itself counted). */
export function deeperThan(value: unknown, levels: number): boolean {
  if (value === null || typeof value !== 'object') return false
  if (levels === 0) return true
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (deeperThan(value[i], levels - 1)) return true
    return false
  }
  for (const k in value) if (deeperThan((value as Record<string, unknown>)[k], levels - 1)) return true
  return false
}
