import { GatewayError, errorResponseJson } from '../errors/registry.js'
import type { CallCharge, Charged, UsageSink } from './rpc-dispatcher.js'

export interface PerCallChargeDeps {
  usage: UsageSink
  /** How long a call over the rate may wait for its token before it is refused (limits.queueMs). */
  queueMs: number
  /** Calls of a client IP refused by a rate limit (for IP throttling). */
  onRejected?: (ip: string, calls: number) => void
}

const FREE: Charged = { delayMs: 0 }

/**
 * The charge of a WebSocket message's calls: none here. The session charged the message against
 * the key's message limit before dispatching it; which node kinds the key may use was checked
 * call by call by the router.
 */
export const ALREADY_CHARGED: CallCharge = () => FREE

/**
 * The charge of calls over HTTP: each call (each call of a batch) against the key's requests per
 * second of its node kind, queued up to `queueMs` for its token, else refused with 429 and the
 * rate-limit headers; refused calls are counted as usage and against the client's IP.
 * @example
 * const charge = chargePerCall({ usage, queueMs: 250 })
 * charge(ctx, 3, 0) // { delayMs: 0 } while the key has three full-node tokens
 */
export function chargePerCall(deps: PerCallChargeDeps): CallCharge {
  return (ctx, full, archive) => {
    let delayMs = 0
    for (const [kind, calls] of [
      ['full', full],
      ['archive', archive],
    ] as const) {
      if (calls === 0) continue
      const d = ctx.key.actor.admit(kind, calls, deps.queueMs)
      if (d.type === 'Admitted') {
        delayMs = Math.max(delayMs, d.delayMs)
        continue
      }
      if (d.reason === 'no-access') {
        const e = new GatewayError(
          'NODE_KIND_NOT_ALLOWED',
          `Forbidden: the ${ctx.key.plan?.name ?? 'current'} plan has no ${kind}-node access; choose a plan that includes ${kind} nodes`,
        )
        return { refusal: { status: e.http, body: errorResponseJson('null', e.rpc, e.message) } }
      }
      deps.usage.rateLimited(ctx.key.account.accountId, ctx.key.record.keyId, ctx.network, kind, calls)
      deps.onRejected?.(ctx.ip(), calls)
      const retryAfterS = Math.max(1, Math.ceil(d.retryAfterMs / 1000))
      const e = new GatewayError(
        'RATE_LIMITED',
        `Rate limit exceeded: this key may make ${d.limit} ${kind}-node calls per second; retry after ${retryAfterS} s, with exponential backoff`,
      )
      return {
        refusal: {
          status: e.http,
          body: errorResponseJson('null', e.rpc, e.message),
          headers: {
            'Retry-After': String(retryAfterS),
            'RateLimit-Limit': String(d.limit),
            'RateLimit-Remaining': '0',
            'RateLimit-Reset': String(Math.max(1, Math.ceil(d.resetMs / 1000))),
          },
        },
      }
    }
    return delayMs === 0 ? FREE : { delayMs }
  }
}
