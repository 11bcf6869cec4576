import type { TollgateEvent } from '../events/types.js'
import type { StateWriter } from '../store/state-writer.js'
import { wsCooldownKey, wsPenaltyKey } from '../store/records.js'
import type { Projection } from '../store/projection.js'

/**
 * Keeps `penalties`: decisions in force until a time (IP throttles, WebSocket cooldowns and
 * penalties of a key), so that a restarted gateway, or another instance following the same log,
 * enforces them too. Two instances may decide for the same IP or key: the later `until` wins,
 * whatever order their events come in.
 */
export const penaltyProjection: Projection = {
  name: 'penalties',
  handles: new Set(['IpThrottled', 'WsCooldownStarted', 'WsPenaltyImposed']),
  apply(event: TollgateEvent, writer: StateWriter): void {
    switch (event.type) {
      case 'IpThrottled': {
        const key = `ip:${event.ip}`
        const known = writer.penalty(key)
        if (known !== undefined && known.until >= event.until) return
        writer.putPenalty(key, { kind: 'ip-throttle', reason: event.reason, since: event.time, until: event.until })
        return
      }
      case 'WsCooldownStarted':
      case 'WsPenaltyImposed': {
        const cooldown = event.type === 'WsCooldownStarted'
        const key = cooldown ? wsCooldownKey(event.keyId) : wsPenaltyKey(event.keyId)
        const known = writer.penalty(key)
        if (known !== undefined && known.until >= event.until) return
        writer.putPenalty(key, { kind: cooldown ? 'ws-cooldown' : 'ws-penalty', reason: event.reason, since: event.time, until: event.until })
        return
      }
      default:
        return
    }
  },
}
