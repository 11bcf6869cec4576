import type { Config } from '../../src/config/types.js'
import { openEventLog } from '../../src/events/open-log.js'
import type { KeyRuleRefused, NotificationsRecorded, TollgateEvent, UsageRecorded } from '../../src/events/types.js'

/**
 * Every UsageRecorded event of a stopped gateway's log (stop it first: stopping flushes the meter
 * and the outbox), of one key when `keyId` is given.
 * @example
 * await tg.stop()
 * const usage = await usageEventsOf(tg.config, key.keyId)
 */
export function usageEventsOf(config: Config, keyId?: string): Promise<UsageRecorded[]> {
  return keyEventsOf(config, 'UsageRecorded', keyId)
}

/** Every NotificationsRecorded event of a stopped gateway's log, of one key when `keyId` is given (as usageEventsOf). */
export function notificationEventsOf(config: Config, keyId?: string): Promise<NotificationsRecorded[]> {
  return keyEventsOf(config, 'NotificationsRecorded', keyId)
}

/** Every KeyRuleRefused event of a stopped gateway's log, of one key when `keyId` is given (as usageEventsOf). */
export function keyRuleRefusedOf(config: Config, keyId?: string): Promise<KeyRuleRefused[]> {
  return keyEventsOf(config, 'KeyRuleRefused', keyId)
}

async function keyEventsOf<K extends 'UsageRecorded' | 'NotificationsRecorded' | 'KeyRuleRefused'>(
  config: Config,
  type: K,
  keyId: string | undefined,
): Promise<Array<Extract<TollgateEvent, { type: K }>>> {
  const log = await openEventLog(config.events, config.dataDir)
  try {
    const out: Array<Extract<TollgateEvent, { type: K }>> = []
    for (let from = 1; ; ) {
      const batch = await log.read(from, 500)
      if (batch.length === 0) return out
      for (const s of batch)
        if (s.event.type === type && (keyId === undefined || s.event.keyId === keyId)) out.push(s.event as Extract<TollgateEvent, { type: K }>)
      from = batch[batch.length - 1]!.seq + 1
    }
  } finally {
    await log.close()
  }
}
