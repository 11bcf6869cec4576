import type { TollgateEvent } from '../events/types.js'
import { unitsOf } from '../events/usage-units.js'
import type { Projection } from '../store/projection.js'
import type { StateTables, StateWriter, WriterPart } from '../store/state-writer.js'
import { UsageDedup } from './usage-dedup.js'
import { UsageRows } from './usage-rows.js'

/** The usage projection's part of a write transaction: which ids were counted, and the rows they add to. */
class UsageLedger implements WriterPart {
  readonly dedup: UsageDedup
  readonly rows: UsageRows
  constructor(tables: StateTables) {
    this.dedup = new UsageDedup(tables)
    this.rows = new UsageRows(tables)
  }
  flush(): void {
    this.dedup.flush()
    this.rows.flush()
  }
  reset(): void {
    this.dedup.reset()
    this.rows.reset()
  }
}

/** The usage part of a writer (one per store, made on first use). */
export function usageLedger(writer: StateWriter): UsageLedger {
  return writer.part(openUsageLedger)
}
function openUsageLedger(tables: StateTables): UsageLedger {
  return new UsageLedger(tables)
}

/**
 * Keeps `usage` (accountId|keyId|network|kind → totals), `usageHourly` (per account and hour, the
 * last days) and `keyUsageHours`/`keyUsageFolded` (UsageRecorded sums and KeyRuleRefused by rule
 * per key and hour, for `tollgate usage` and the dashboard's refusals). Each event id is summed once, even when the log holds it twice: the log
 * dedups ids only within JetStream's duplicate window, and an outbox that re-sends after a long
 * outage stores the same fact at a second seq (see UsageDedup, whose state is bounded).
 */
export const usageProjection: Projection = {
  name: 'usage',
  handles: new Set(['NotificationsRecorded', 'RateLimited', 'UsageRecorded', 'KeyRuleRefused']),
  apply(event: TollgateEvent, writer: StateWriter): void {
    // The projector hands this projection only the usage events it handles (CountedEvent).
    const ledger = usageLedger(writer)
    switch (event.type) {
      case 'UsageRecorded':
        if (!ledger.dedup.markCounted(event)) return
        // A version 1 event has no units: unitsOf counts its calls at a fixed cost, so that a
        // replay gives the units live projection gave.
        // Totals per key; by hour per key for `tollgate usage`, and per account for the
        // dashboard's chart when calls were served (an interval is counted in the hour it starts
        // in; intervals are seconds long, so the error is at most one interval).
        ledger.rows.addRecorded(event, unitsOf(event))
        return
      case 'RateLimited':
        if (!ledger.dedup.markCounted(event)) return
        ledger.rows.add(event, { rateLimited: event.count })
        return
      case 'NotificationsRecorded':
        if (!ledger.dedup.markCounted(event)) return
        ledger.rows.add(event, { notifications: event.notifications, bytesOut: event.bytesOut, units: event.units ?? 0 })
        return
      case 'KeyRuleRefused':
        if (!ledger.dedup.markCounted(event)) return
        ledger.rows.addRefused(event)
        return
      default:
        return
    }
  },
}
