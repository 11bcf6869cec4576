import { makeEvent } from '../../src/events/make-event.js'
import type { UsageRecorded } from '../../src/events/types.js'

/**
 * What one serving instance reports for one second of usage: one UsageRecorded per account
 * (`acc-<a>`, its key `key-<a>`, 17 calls each), as its outbox appends them. The followers'
 * benches (follow-cost, usage-apply-cost) feed on these.
 */
export function intervalUsage(intervalStart: number, accounts: number, instance: string): UsageRecorded[] {
  const events: UsageRecorded[] = []
  for (let a = 0; a < accounts; a++) {
    events.push(
      makeEvent<UsageRecorded>(
        {
          type: 'UsageRecorded',
          accountId: `acc-${a}`,
          keyId: `key-${a}`,
          network: 'eth-1',
          kind: 'full',
          instance,
          intervalStart,
          intervalMs: 1000,
          requests: 17,
          errors: 0,
          bytesIn: 1200,
          bytesOut: 900,
        },
        intervalStart + 1000,
      ),
    )
  }
  return events
}
