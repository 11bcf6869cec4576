import type { TollgateEvent } from '../events/types.js'
import type { StateWriter } from '../store/state-writer.js'
import { unhandledEvent, type Projection } from './projection.js'

/**
 * Keeps each key's WebSocket cooldown and penalty in the `penalties` db (see WsBlocks), so that
 * a restarted gateway, or another instance on the same event log, refuses what the deciding
 * instance refused. The later end wins: facts from several instances fold in any order to the
 * same record, which replay must rebuild byte for byte.
 */
export const wsBlockProjection: Projection = {
  name: 'ws-blocks',
  apply(event: TollgateEvent, writer: StateWriter): void {
    switch (event.type) {
      case 'WsCooldownStarted':
      case 'WsPenaltyImposed': {
        const blocks = writer.wsBlocks(event.keyId) ?? { cooldownUntil: 0, penaltyUntil: 0 }
        const field = event.type === 'WsCooldownStarted' ? 'cooldownUntil' : 'penaltyUntil'
        if (blocks[field] >= event.until) return
        writer.putWsBlocks(event.keyId, { ...blocks, [field]: event.until })
        return
      }
      case 'AccountCreated':
      case 'PlanActivated':
      case 'PlanEnded':
      case 'NodesSelected':
      case 'KeyIssued':
      case 'KeyRevoked':
      case 'RateLimited':
      case 'UsageRecorded':
      case 'WsLimited':
      case 'NotificationsRecorded':
        return
      default:
        return unhandledEvent(event)
    }
  },
}
