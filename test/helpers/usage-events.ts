import type { Config } from '../../src/config/types.js'
import { openEventLog } from '../../src/events/open-log.js'
import type { UsageRecorded } from '../../src/events/types.js'

/**
 * Every UsageRecorded event of a stopped gateway's log (stop it first: stopping flushes the meter
 * and the outbox), of one key when `keyId` is given.
 * @example
 * await tg.stop()
 * const usage = await usageEventsOf(tg.config, key.keyId)
 */
export async function usageEventsOf(config: Config, keyId?: string): Promise<UsageRecorded[]> {
  const log = await openEventLog(config.events, config.dataDir)
  try {
    const out: UsageRecorded[] = []
    for (let from = 1; ; ) {
      const batch = await log.read(from, 500)
      if (batch.length === 0) return out
      for (const s of batch) if (s.event.type === 'UsageRecorded' && (keyId === undefined || s.event.keyId === keyId)) out.push(s.event as UsageRecorded)
      from = batch[batch.length - 1]!.seq + 1
    }
  } finally {
    await log.close()
  }
}
