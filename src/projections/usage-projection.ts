import type { TollgateEvent } from '../events/types.js'
import { usageKey } from '../store/records.js'
import type { StateWriter } from '../store/state-writer.js'
import { unhandledEvent, type Projection } from './projection.js'

/**
 * Keeps `usage` (accountId|keyId|network|kind → totals). Each event id is summed once, even when
 * the log holds it twice (see StateWriter.markUsageCounted).
 */
export const usageProjection: Projection = {
  name: 'usage',
  apply(event: TollgateEvent, writer: StateWriter): void {
    switch (event.type) {
      case 'UsageRecorded':
        if (!writer.markUsageCounted(event.id, event.intervalStart)) return
        writer.addUsage(usageKey(event.accountId, event.keyId, event.network, event.kind), {
          requests: event.requests,
          errors: event.errors,
          bytesIn: event.bytesIn,
          bytesOut: event.bytesOut,
        })
        return
      case 'RateLimited':
        if (!writer.markUsageCounted(event.id, event.intervalStart)) return
        writer.addUsage(usageKey(event.accountId, event.keyId, event.network, event.kind), { rateLimited: event.count })
        return
      case 'NotificationsRecorded':
        if (!writer.markUsageCounted(event.id, event.intervalStart)) return
        writer.addUsage(usageKey(event.accountId, event.keyId, event.network, event.kind), {
          notifications: event.notifications,
          bytesOut: event.bytesOut,
        })
        return
      case 'WsLimited':
      case 'WsCooldownStarted':
      case 'WsPenaltyImposed':
        return
      case 'IpThrottled':
      case 'AccountCreated':
      case 'PlanActivated':
      case 'PlanEnded':
      case 'NodesSelected':
      case 'KeyIssued':
      case 'KeyRevoked':
        return
      default:
        return unhandledEvent(event)
    }
  },
}
