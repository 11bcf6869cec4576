import type { TollgateEvent } from '../events/types.js'
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
        // Totals per key; by hour per key for `tollgate usage`, and per account for the
        // dashboard's chart when calls were served (an interval is counted in the hour it starts
        // in; intervals are seconds long, so the error is at most one interval).
        writer.addUsage(event, usage, { key: usage, account: event.requests > 0 ? { requests: event.requests, errors: event.errors } : undefined })
        return
      }
      case 'RateLimited':
        if (!writer.markUsageCounted(event)) return
        writer.addUsage(event, { rateLimited: event.count })
        return
      case 'NotificationsRecorded':
        if (!writer.markUsageCounted(event)) return
        writer.addUsage(event, { notifications: event.notifications, bytesOut: event.bytesOut })
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
