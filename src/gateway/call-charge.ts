import { refusal } from '../errors/messages.js'
import type { GatewayError } from '../errors/registry.js'
import type { CallCharge, CallsByKind, Charged, UsageSink } from './dispatch-context.js'

export interface PerCallChargeDeps {
  usage: UsageSink
  /** How long a call over the rate may wait for its token before it is refused (limits.queueMs in force: read per call, a reload's holds from the next). */
  queueMs: () => number
  /** Calls of a client IP refused by a rate limit (for IP throttling). */
  onRejected?: (ip: string, calls: number) => void
}

const FREE: Charged = { delayMs: 0 }

/**
 * The charge of calls over HTTP: each call (each call of a batch) against the key's requests per
 * second of its node kind, and its compute units against the plan's units per second when the
 * plan sets one, queued up to `queueMs` for its tokens, else refused with 429 and the rate-limit
 * headers of the limit it hit; refused calls are counted as usage and against the client's IP.
 * @example
 * const charge = chargePerCall({ usage, queueMs: () => 250 })
 * charge(ctx, { full: 3, archive: 0, fullUnits: 30, archiveUnits: 0 }) // { delayMs: 0 } while the key has three full-node tokens
 */
export function chargePerCall(deps: PerCallChargeDeps): CallCharge {
  // Each kind in turn, written out: no array of kinds made per request (the loop over a literal
  // array of tuples allocated three arrays per call on the path of every HTTP request).
  return (ctx, calls) => {
    const a = calls.full === 0 ? FREE : chargeKind(ctx, deps, 'full', calls.full, calls.fullUnits)
    if (a.refusal !== undefined) return a
    const b = calls.archive === 0 ? FREE : chargeKind(ctx, deps, 'archive', calls.archive, calls.archiveUnits)
    if (b.refusal !== undefined) return b
    const delayMs = Math.max(a.delayMs, b.delayMs)
    return delayMs === 0 ? FREE : { delayMs }
  }
}

/** One node kind's calls (and units) against the key's buckets: admitted with a delay, or refused. */
function chargeKind(ctx: Parameters<CallCharge>[0], deps: PerCallChargeDeps, kind: 'full' | 'archive', calls: number, units: number): Charged {
  const d = ctx.key.actor.charge(kind, { calls, queueMs: deps.queueMs(), units })
  if (d.type === 'Admitted') return d.delayMs === 0 ? FREE : { delayMs: d.delayMs }
  if (d.reason === 'no-access') {
    return { refusal: refusal('PLAN_LACKS_KIND', { plan: ctx.key.plan?.name, kind }) }
  }
  deps.usage.rateLimited(ctx.key.account.accountId, ctx.key.record.keyId, ctx.network, kind, calls)
  deps.onRejected?.(ctx.ip(), calls)
  return { refusal: rateLimited(d, kind, units) }
}

/**
 * The charge of a WebSocket message's compute units, when the plan limits units: its calls were
 * charged as messages by the session, their units go against the same units per second as over
 * HTTP (else a WebSocket client would escape the limit). A refusal is the JSON-RPC error -32005
 * the session sends; it is counted like an HTTP refusal.
 */
export function chargeUnitsOnly(deps: PerCallChargeDeps): CallCharge {
  return (ctx, calls) => {
    const limits = ctx.key.actor.state.limits
    // No units limit on either kind (every shipped plan): nothing to charge, no admission.
    if (limits.fullUnits == null && limits.archiveUnits == null) return FREE
    return chargeUnits(ctx, deps, calls)
  }
}

/** The units of each node kind that has calls, with no calls taken (they were charged as messages). */
function chargeUnits(ctx: Parameters<CallCharge>[0], deps: PerCallChargeDeps, byKind: Readonly<CallsByKind>): Charged {
  const limits = ctx.key.actor.state.limits
  let delayMs = 0
  for (const [kind, calls, units] of [
    ['full', byKind.full, byKind.fullUnits],
    ['archive', byKind.archive, byKind.archiveUnits],
  ] as const) {
    // A kind without a units limit has nothing to charge here (asking would read its calls bucket).
    if (calls === 0 || units === 0 || (kind === 'full' ? limits.fullUnits : limits.archiveUnits) == null) continue
    const d = ctx.key.actor.charge(kind, { calls: 0, queueMs: deps.queueMs(), units })
    if (d.type === 'Admitted') {
      delayMs = Math.max(delayMs, d.delayMs)
      continue
    }
    // no-access was refused by the router call by call; only the units can refuse here.
    if (d.reason === 'no-access') continue
    deps.usage.rateLimited(ctx.key.account.accountId, ctx.key.record.keyId, ctx.network, kind, calls)
    deps.onRejected?.(ctx.ip(), calls)
    return { refusal: rateLimited(d, kind, units) }
  }
  return delayMs === 0 ? FREE : { delayMs }
}

/** The 429 of a rate-limit refusal: which limit, the retry time and the RateLimit-* headers of that limit. */
function rateLimited(
  d: { reason: 'http-rps' | 'http-units'; retryAfterMs: number; limit: number; resetMs: number },
  kind: string,
  units: number,
): GatewayError {
  const retryAfterS = Math.max(1, Math.ceil(d.retryAfterMs / 1000))
  const options = {
    headers: {
      'Retry-After': String(retryAfterS),
      'RateLimit-Limit': String(d.limit),
      'RateLimit-Remaining': '0',
      'RateLimit-Reset': String(Math.max(1, Math.ceil(d.resetMs / 1000))),
    },
  }
  return d.reason === 'http-units'
    ? refusal('KEY_UNITS_PER_SECOND', { limit: d.limit, kind, units, retryAfterS }, options)
    : refusal('KEY_CALLS_PER_SECOND', { limit: d.limit, kind, retryAfterS }, options)
}

/**
 * How far ahead work charged after its answer may take a key's compute units: the time the key's
 * units per second take to refill it. Past it the rest is not taken from the rate (still counted
 * in usage): a key cannot be put in debt for hours by one call.
 */
const WORK_DEBT_MS = 60_000

/**
 * Charge the units of work the gateway did for an answer beyond its method's own
 * (Answer.extraUnits: a verified call's EVM run by its gas), known only once it is answered:
 * taken from the key's units per second when its plan sets one, in debt (the key's next calls
 * wait or are refused), the call itself not counted again. The same over HTTP and WebSocket.
 * @example chargeWork(ctx, 'full', answer.extraUnits)
 */
export function chargeWork(ctx: Parameters<CallCharge>[0], kind: 'full' | 'archive', units: number): void {
  if (units <= 0) return
  const limits = ctx.key.actor.state.limits
  if ((kind === 'full' ? limits.fullUnits : limits.archiveUnits) == null) return
  ctx.key.actor.charge(kind, { calls: 0, queueMs: WORK_DEBT_MS, units })
}
