import type { KeyRuleRefused, NotificationsRecorded, RateLimited, UsageRecorded } from '../events/types.js'
import type { NodeKind } from '../core/node-kind.js'
import type { Clock } from '../../actors/runtime/clock.js'

/**
 * Aggregates usage and rate-limit decisions per (key, network, node kind, interval) in memory and
 * hands finished intervals to `emit` as UsageRecorded / RateLimited events. One event per key per
 * interval instead of one per call keeps the event log and its consumers at a rate that does not
 * grow with traffic; the request path only adds to counters.
 */
export interface UsageMeterOptions {
  clock: Clock
  intervalMs: number
  /** Which gateway process this is: part of the events' ids so that instances never collide. */
  instance: string
  emit: (
    events: Array<
      | Omit<UsageRecorded, 'id' | 'version' | 'time'>
      | Omit<RateLimited, 'id' | 'version' | 'time'>
      | Omit<NotificationsRecorded, 'id' | 'version' | 'time'>
      | Omit<KeyRuleRefused, 'id' | 'version' | 'time'>
    >,
  ) => void
}

interface Bucket {
  accountId: string
  keyId: string
  network: string
  kind: NodeKind
  intervalStart: number
  requests: number
  errors: number
  /** Compute units of the calls served (each call its method's cost). */
  units: number
  bytesIn: number
  bytesOut: number
  rateLimited: number
  notifications: number
  notificationBytes: number
  notificationUnits: number
}

/** What a request's calls of one node kind used, counted by UsageMeter.served. */
export interface CallsServed {
  readonly accountId: string
  readonly keyId: string
  readonly network: string
  readonly kind: NodeKind
  /** Calls answered (each call of a batch, each copy, counts). */
  readonly calls: number
  /** Of them, answered with a JSON-RPC error. */
  readonly errors: number
  /** The request's bytes: counted with one node kind of the request only. */
  readonly bytesIn: number
  readonly bytesOut: number
  /** Compute units charged for them, work done after the answer included. */
  readonly units: number
}

/** A flush runs this long after an interval's end: timers may fire a little early. */
const FLUSH_AFTER_BOUNDARY_MS = 2

export class UsageMeter {
  /** Compute units of every call served since start (the tollgate_units_served_total counter). */
  unitsServed = 0
  /** Calls refused by a key's own rules since start, by rule (the tollgate_key_rule_refusals_total counter). */
  readonly keyRuleRefusals: Record<KeyRuleRefused['rule'], number> = { method: 0, contract: 0, ip: 0, 'user-agent': 0 }
  /** Refusals by key rule in the intervals not yet flushed: `keyId|network|rule|intervalStart` → the event's fields. */
  #refusals = new Map<string, Omit<KeyRuleRefused, 'id' | 'version' | 'time' | 'type' | 'instance' | 'intervalMs'>>()
  readonly #opts: UsageMeterOptions
  #buckets = new Map<string, Bucket>()
  /** The bucket last counted into; forgotten when a flush takes buckets out. */
  #last: Bucket | undefined
  #timer: NodeJS.Timeout | undefined

  constructor(opts: UsageMeterOptions) {
    this.#opts = opts
  }

  /** Count calls served for a key (each call of a batch counts), and their compute units. */
  served(used: CallsServed): void {
    const b = this.#bucket(used.accountId, used.keyId, used.network, used.kind)
    b.requests += used.calls
    b.units += used.units
    this.unitsServed += used.units
    b.errors += used.errors
    b.bytesIn += used.bytesIn
    b.bytesOut += used.bytesOut
  }

  /** Count calls rejected by the key's rate limit. */
  rateLimited(accountId: string, keyId: string, network: string, kind: NodeKind, calls: number): void {
    this.#bucket(accountId, keyId, network, kind).rateLimited += calls
  }

  /**
   * Count calls refused by one of a key's own rules (src/gateway/key-rules.ts): a request or a
   * WebSocket upgrade refused whole is one; each call of a batch counts.
   */
  keyRuleRefused(accountId: string, keyId: string, network: string, rule: KeyRuleRefused['rule'], calls: number): void {
    this.keyRuleRefusals[rule] += calls
    const intervalStart = this.#intervalStart(this.#opts.clock.now())
    const k = `${keyId}|${network}|${rule}|${intervalStart}`
    const r = this.#refusals.get(k)
    if (r !== undefined) r.count += calls
    else this.#refusals.set(k, { accountId, keyId, network, rule, intervalStart, count: calls })
  }

  /** Count subscription notifications sent to a key's WebSocket client. */
  notified(accountId: string, keyId: string, network: string, kind: NodeKind, notifications: number, bytes: number, units: number): void {
    const b = this.#bucket(accountId, keyId, network, kind)
    b.notifications += notifications
    b.notificationBytes += bytes
    b.notificationUnits += units
  }

  /**
   * Flush each interval as soon as it ends. The timer is aligned on the intervals' boundaries (a
   * plain setInterval would hand an interval on up to a whole interval late), so a crash loses at
   * most the interval in progress: the bound docs/operations.md states.
   */
  start(): void {
    const now = this.#opts.clock.now()
    const nextStart = this.#intervalStart(now) + this.#opts.intervalMs
    this.#timer = setTimeout(
      () => {
        this.flush(false)
        this.start()
      },
      nextStart - now + FLUSH_AFTER_BOUNDARY_MS,
    )
    this.#timer.unref()
  }

  /** Emit finished intervals (all of them when `all`, at shutdown). */
  flush(all: boolean): void {
    const current = this.#intervalStart(this.#opts.clock.now())
    const events: Parameters<UsageMeterOptions['emit']>[0] = []
    for (const [k, b] of this.#buckets) {
      if (!all && b.intervalStart >= current) continue
      this.#buckets.delete(k)
      if (this.#last === b) this.#last = undefined
      const head = {
        accountId: b.accountId,
        keyId: b.keyId,
        network: b.network,
        kind: b.kind,
        instance: this.#opts.instance,
        intervalStart: b.intervalStart,
        intervalMs: this.#opts.intervalMs,
      }
      if (b.requests > 0 || b.errors > 0) {
        events.push({ type: 'UsageRecorded', ...head, requests: b.requests, errors: b.errors, bytesIn: b.bytesIn, bytesOut: b.bytesOut, units: b.units })
      }
      if (b.rateLimited > 0) events.push({ type: 'RateLimited', ...head, count: b.rateLimited, reason: 'http-rps' })
      if (b.notifications > 0)
        events.push({ type: 'NotificationsRecorded', ...head, notifications: b.notifications, bytesOut: b.notificationBytes, units: b.notificationUnits })
    }
    for (const [k, r] of this.#refusals) {
      if (!all && r.intervalStart >= current) continue
      this.#refusals.delete(k)
      events.push({ type: 'KeyRuleRefused', ...r, instance: this.#opts.instance, intervalMs: this.#opts.intervalMs })
    }
    if (events.length > 0) this.#opts.emit(events)
  }

  stop(): void {
    if (this.#timer) clearTimeout(this.#timer)
    this.#timer = undefined
    this.flush(true)
  }

  #intervalStart(now: number): number {
    return now - (now % this.#opts.intervalMs)
  }

  #bucket(accountId: string, keyId: string, network: string, kind: NodeKind): Bucket {
    const start = this.#intervalStart(this.#opts.clock.now())
    // The bucket of the last call, when this one is the same key, network, kind and interval (a
    // client's calls come in runs): no key string built and looked up per call.
    const last = this.#last
    if (last !== undefined && last.keyId === keyId && last.network === network && last.kind === kind && last.intervalStart === start) return last
    const k = `${keyId}|${network}|${kind}|${start}`
    let b = this.#buckets.get(k)
    if (!b) {
      b = {
        accountId,
        keyId,
        network,
        kind,
        intervalStart: start,
        requests: 0,
        errors: 0,
        units: 0,
        bytesIn: 0,
        bytesOut: 0,
        rateLimited: 0,
        notifications: 0,
        notificationBytes: 0,
        notificationUnits: 0,
      }
      this.#buckets.set(k, b)
    }
    this.#last = b
    return b
  }
}
