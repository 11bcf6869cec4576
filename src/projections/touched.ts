import { categoryOf, type TollgateEvent } from '../events/types.js'
import type { StateWriter } from '../store/state-writer.js'

/** What a batch touched: the gateway refreshes the actors of these keys and accounts. */
export interface ProjectorChanges {
  keyHashes: string[]
  accountIds: string[]
  /** Penalty keys (`ip:<address>`…) whose decisions the batch carried. */
  penaltyKeys: string[]
}

/**
 * The keys and accounts that the account events of a chunk concern, skipped ones included: when
 * the CLI applied a KeyRevoked to a store the gateway shares, the gateway's projector skips it,
 * and its actors must still hear that the key changed.
 */
export class Touched {
  readonly #keyHashes = new Set<string>()
  readonly #accountIds = new Set<string>()
  readonly #penaltyKeys = new Set<string>()

  add(event: TollgateEvent, writer: StateWriter): void {
    if (event.type === 'IpThrottled') this.#penaltyKeys.add(`ip:${event.ip}`)
    if (event.type === 'WsCooldownStarted' || event.type === 'WsPenaltyImposed') {
      // A block decided by another instance (or before a restart) must reach this key's actor.
      const hash = writer.keyHashOf(event.keyId)
      if (hash !== undefined) this.#keyHashes.add(hash)
      return
    }
    if (categoryOf(event.type) !== 'accounts' || !('accountId' in event)) return
    this.#accountIds.add(event.accountId)
    if (event.type === 'KeyIssued') this.#keyHashes.add(event.keyHash)
    if (event.type === 'KeyRevoked' || event.type === 'DomainsRestricted' || event.type === 'KeyRestricted' || event.type === 'KeyTokenRequired') {
      const hash = writer.keyHashOf(event.keyId)
      if (hash !== undefined) this.#keyHashes.add(hash)
    }
  }

  changes(): ProjectorChanges {
    return { keyHashes: [...this.#keyHashes], accountIds: [...this.#accountIds], penaltyKeys: [...this.#penaltyKeys] }
  }
}
