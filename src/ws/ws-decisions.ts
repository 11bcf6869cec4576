import type { Clock } from '../../actors/runtime/clock.js'
import type { EventInput, WsCooldownStarted, WsLimitReason, WsLimited, WsPenaltyImposed } from '../events/types.js'

export interface WsDecisionsOptions {
  clock: Clock
  intervalMs: number
  /** Which gateway process decided (part of the events' ids). */
  instance: string
  /** Hands events to the outbox; never awaited on the request path. */
  emit: (events: EventInput[]) => void
}

/** Who a decision is about. */
export interface WsDecisionScope {
  accountId: string
  keyId: string
  network: string
}

interface Count {
  scope: WsDecisionScope
  reason: WsLimitReason
  intervalStart: number
  count: number
}

/**
 * The WebSocket limits' decisions as events. Refusals are counted per key, network, reason and
 * interval and emitted as WsLimited once the interval is over (one event per key per second,
 * however hard a client floods); a cooldown or a penalty is emitted at once, since another
 * instance must enforce it too.
 */
export class WsDecisions {
  readonly #opts: WsDecisionsOptions
  #counts = new Map<string, Count>()
  #timer: NodeJS.Timeout | undefined

  constructor(opts: WsDecisionsOptions) {
    this.#opts = opts
  }

  /** `count` connections or calls refused for `reason`. */
  limited(scope: WsDecisionScope, reason: WsLimitReason, count: number): void {
    const start = this.#intervalStart(this.#opts.clock.now())
    const k = `${scope.keyId}|${scope.network}|${reason}|${start}`
    const c = this.#counts.get(k)
    if (c) c.count += count
    else this.#counts.set(k, { scope, reason, intervalStart: start, count })
  }

  cooldownStarted(scope: WsDecisionScope, d: { until: number; connections: number; windowMs: number }): void {
    const event: EventInput<WsCooldownStarted> = {
      type: 'WsCooldownStarted',
      ...scope,
      instance: this.#opts.instance,
      reason: 'ws-connection-rate',
      until: d.until,
      connections: d.connections,
      windowMs: d.windowMs,
    }
    this.#opts.emit([event])
  }

  penaltyImposed(scope: WsDecisionScope, d: { until: number; badMessages: number; windowMs: number }): void {
    const event: EventInput<WsPenaltyImposed> = {
      type: 'WsPenaltyImposed',
      ...scope,
      instance: this.#opts.instance,
      reason: 'ws-bad-messages',
      until: d.until,
      badMessages: d.badMessages,
      windowMs: d.windowMs,
    }
    this.#opts.emit([event])
  }

  start(): void {
    this.#timer = setInterval(() => this.flush(false), this.#opts.intervalMs)
    this.#timer.unref()
  }

  /** Emit the counts of finished intervals (all of them when `all`, at shutdown). */
  flush(all: boolean): void {
    const current = this.#intervalStart(this.#opts.clock.now())
    const events: EventInput<WsLimited>[] = []
    for (const [k, c] of this.#counts) {
      if (!all && c.intervalStart >= current) continue
      this.#counts.delete(k)
      events.push({
        type: 'WsLimited',
        ...c.scope,
        instance: this.#opts.instance,
        intervalStart: c.intervalStart,
        intervalMs: this.#opts.intervalMs,
        reason: c.reason,
        count: c.count,
      })
    }
    if (events.length > 0) this.#opts.emit(events)
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer)
    this.flush(true)
  }

  #intervalStart(now: number): number {
    return now - (now % this.#opts.intervalMs)
  }
}
