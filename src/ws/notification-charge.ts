import type { WsConfig } from '../config/types.js'
import type { NodeKind } from '../core/node-kind.js'
import { closing, type Closing } from '../errors/close-reasons.js'
import type { KeyContext } from '../gateway/key-directory.js'
import type { UsageMeter } from '../usage/usage-meter.js'
import { notificationUnits, type NotificationBudgets } from './notification-budget.js'

export interface NotificationChargeDeps {
  usage: UsageMeter
  /** Each account's notification units per second, across its connections (ws.notificationUnitsPerSecond). */
  notifications: NotificationBudgets
  config: WsConfig
}

/**
 * One connection's notifications of this event-loop turn: each copy delivered costs its units,
 * duplicates of one filter included (docs/costs.md), within the account's notification budget and
 * the plan's units per second where the plan sets one. Copies are counted here in three numbers and
 * recorded once per turn (`settle`), so that the usage meter and the plan's units are asked once
 * per batch rather than once per copy (a key string and a bucket per copy before).
 * @example
 * const refused = charge.take(text, 'full') // the close reason past a budget, else counted
 * charge.settle() // before the turn's messages are written
 */
export class NotificationCharge {
  readonly #key: KeyContext
  readonly #network: string
  readonly #deps: NotificationChargeDeps
  #count = 0
  #bytes = 0
  #units = 0
  #kind: NodeKind = 'full'

  constructor(key: KeyContext, network: string, deps: NotificationChargeDeps) {
    this.#key = key
    this.#network = network
    this.#deps = deps
  }

  /** Bytes of this turn's notifications not yet settled (what waits in memory for the turn's end). */
  get bytes(): number {
    return this.#bytes
  }

  /**
   * Count one notification copy of `kind`, or say why the connection must close instead (past
   * either budget the connection is closed with 1008, docs/websocket.md).
   */
  take(text: string, kind: NodeKind): Closing | undefined {
    // A turn's copies are settled under one node kind: they are charged as that kind.
    if (kind !== this.#kind) {
      this.settle()
      this.#kind = kind
    }
    const units = notificationUnits(text.length)
    const key = this.#key
    if (!this.#deps.notifications.spend(key.record.accountId, units)) {
      // Set: without a budget (null) spend never refuses.
      const perSecond = this.#deps.config.notificationUnitsPerSecond!
      return closing('ACCOUNT_NOTIFICATIONS_SPENT', { perSecond })
    }
    // This turn's copies are taken from the plan's units when settled: they count already.
    if (key.actor.unitsLeft(kind) - this.#units < units) {
      const limits = key.actor.state.limits
      // Set: a plan without a units limit has no end to its units left.
      const perSecond = (kind === 'full' ? limits.fullUnits : limits.archiveUnits)!
      return closing('PLAN_UNITS_SPENT_ON_NOTIFICATIONS', { perSecond, kind })
    }
    this.#count++
    this.#bytes += text.length
    this.#units += units
    return undefined
  }

  /**
   * This turn's notifications counted: in the usage events (NotificationsRecorded) and against
   * the plan's units per second (shared with the fleet as calls' units are). Called before they
   * are written, so a batch cut short by the slow-consumer bound is charged whole (one turn's).
   */
  settle(): void {
    const n = this.#count
    if (n === 0) return
    const key = this.#key
    const units = this.#units
    this.#deps.usage.notified(key.account.accountId, key.record.keyId, this.#network, this.#kind, n, this.#bytes, units)
    key.actor.notified(this.#kind, units)
    this.#count = 0
    this.#bytes = 0
    this.#units = 0
  }

  /** Queued and never written (a slow consumer, a peer gone): not delivered, not charged. */
  discard(): void {
    this.#count = this.#bytes = this.#units = 0
  }
}
