import type { TollgateEvent } from '../events/types.js'
import { HOUR_MS, usageKey } from '../store/records.js'
import type { StateWriter } from '../store/state-writer.js'
import { unhandledEvent, type Projection } from './projection.js'

/**
 * Keeps `usage` (accountId|keyId|network|kind → totals), `usageHourly` (per account and hour, the
 * last days) and `keyUsageHours`/`keyUsageFolded` (UsageRecorded sums per key and hour, for
 * `tollgate usage`). Each event id is summed once, even when the log holds it twice (see
 * StateWriter.markUsageCounted).
 */
export const usageProjection: Projection = {
  name: 'usage',
  apply(event: TollgateEvent, writer: StateWriter): void {
    switch (event.type) {
      case 'UsageRecorded': {
        if (!writer.markUsageCounted(event)) return
        const usage = { requests: event.requests, errors: event.errors, bytesIn: event.bytesIn, bytesOut: event.bytesOut }
        writer.addUsage(usageKey(event.accountId, event.keyId, event.network, event.kind), usage)
        // Hourly buckets per account for the dashboard's chart, and per key for `tollgate usage`
        // (an interval is counted in the hour it starts in; intervals are seconds long, so the
        // error is at most one interval).
        const hour = event.intervalStart - (event.intervalStart % HOUR_MS)
        if (event.requests > 0) {
          writer.addHourlyUsage(event.accountId, hour, event.network, event.kind, event.requests, event.errors)
        }
        writer.addKeyHourUsage(event.accountId, event.keyId, hour, usage)
        return
      }
      case 'RateLimited':
        if (!writer.markUsageCounted(event)) return
        writer.addUsage(usageKey(event.accountId, event.keyId, event.network, event.kind), { rateLimited: event.count })
        return
      case 'NotificationsRecorded':
        if (!writer.markUsageCounted(event)) return
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
      case 'SignedIn':
      case 'SignedOut':
      case 'FreePlanClaimed':
      case 'InvoiceCreated':
      case 'PaymentConfirmed':
      case 'PaymentUnmatched':
      case 'PrivateNodeRequested':
      case 'DomainsRestricted':
      case 'DedicatedNodeAttached':
        return
      default:
        return unhandledEvent(event)
    }
  },
}
