import type { Clock } from '../../actors/runtime/clock.js'
import { initialIpState, isIdle, recordRejected, throttledFor, type IpState, type IpThrottleLimits } from '../../actors/ip/ip-throttle.js'
import type { StateStore } from '../store/state-store.js'
import { refusal } from '../errors/messages.js'
import type { GatewayError } from '../errors/registry.js'

/** What the host does with a throttle decision: emit IpThrottled (through the outbox). */
export type IpThrottledHook = (ip: string, until: number, rejections: number) => void

/**
 * Client IPs: the throttle state of each IP seen rejecting (in memory, per instance), and the
 * throttles in force from the event log (projected into LMDB by any instance), so that a
 * restarted gateway or another instance enforces them too.
 */
export class IpDirectory {
  readonly #local = new Map<string, IpState>()
  /** ip → until, from the projection. */
  readonly #projected = new Map<string, number>()

  constructor(
    private readonly store: StateStore,
    private readonly clock: Clock,
    /** limits.ipThrottle; a reload replaces them (apply), IPs counted so far keep their counts. */
    private limits: IpThrottleLimits,
    private readonly onThrottled: IpThrottledHook,
  ) {
    for (const { key, penalty } of store.penaltiesInForce('ip:', clock.now())) this.#projected.set(key.slice(3), penalty.until)
  }

  /** A reload's limits.ipThrottle, for the rejections counted from now on. */
  apply(next: { limits: IpThrottleLimits }): void {
    this.limits = next.limits
  }

  /**
   * Whether any IP is throttled or being counted towards a throttle: when none is, no request
   * needs its address checked (the common case, and the request path skips decoding it).
   */
  tracking(): boolean {
    return this.#local.size > 0 || this.#projected.size > 0
  }

  /** The 429 for a throttled IP, or undefined. */
  check(ip: string): GatewayError | undefined {
    const now = this.clock.now()
    const projected = this.#projected.get(ip) ?? 0
    const local = this.#local.get(ip)
    const waitMs = Math.max(projected - now, local ? throttledFor(local, now) : 0)
    if (waitMs <= 0) {
      if (projected !== 0) this.#projected.delete(ip)
      return undefined
    }
    const retryAfterS = Math.ceil(waitMs / 1000)
    return refusal(
      'IP_THROTTLED_UNTIL',
      { rejections: this.limits.rejections, windowMs: this.limits.windowMs, until: now + waitMs, retryAfterS },
      { headers: { 'Retry-After': String(retryAfterS) } },
    )
  }

  /** Count calls of this IP that a rate limit rejected. */
  rejected(ip: string, calls: number): void {
    const now = this.clock.now()
    const { state, decision } = recordRejected(this.#local.get(ip) ?? initialIpState(), calls, now, this.limits)
    this.#local.set(ip, state)
    if (decision.type === 'Throttled') this.onThrottled(ip, decision.until, decision.rejections)
  }

  /** The projector applied decisions about these penalty keys (`ip:<address>`). */
  refresh(penaltyKeys: readonly string[]): void {
    for (const key of penaltyKeys) {
      if (!key.startsWith('ip:')) continue
      const penalty = this.store.penalty(key)
      if (penalty) this.#projected.set(key.slice(3), penalty.until)
    }
  }

  /** Forget IPs with nothing to remember (memory stays bounded by the IPs recently rejected). */
  sweep(): void {
    const now = this.clock.now()
    for (const [ip, state] of this.#local) if (isIdle(state, now, this.limits)) this.#local.delete(ip)
    for (const [ip, until] of this.#projected) if (until <= now) this.#projected.delete(ip)
  }
}
