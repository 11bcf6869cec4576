import { connectionAllowance } from '../../actors/fleet/shares.js'

/** What the connection shares need of the membership: the other live instances, when each was last heard, this one's rank. */
export interface ShareView {
  peers(): readonly string[]
  lastHeard(id: string): number
  rank(): number
}

/**
 * Open WebSocket connections shared by the fleet's instances: a count, not a rate, so each
 * instance may hold its own connections as it last published them plus its part of what is free
 * (actors/fleet/shares.ts). Every instance hears every open count (on heartbeats and when one
 * changes): there are few, whatever the fleet's calls.
 */
export class ConnectionShares {
  /** Open connections per account as each other instance last published them. */
  readonly #othersOpen = new Map<string, Map<string, number>>()
  /** This instance's open connections per account as it last published them. */
  readonly #publishedOpen = new Map<string, number>()
  /**
   * Per account, the connections this instance granted itself and when it last published its
   * count: its grant grows only once every live instance has been heard since that publication,
   * so that it never grows on a view in which the others have not yet told what they opened.
   */
  readonly #grants = new Map<string, { granted: number; since: number }>()

  /** How many of the account's connections (the key's limit `max`) this instance may hold now. */
  allowance(accountId: string, max: number, view: ShareView, now: number): number {
    const open = this.#othersOpen.get(accountId)
    const peers = view.peers()
    // Every live instance has its part, those with no connection of this key too.
    const others = peers.map((id) => open?.get(id) ?? 0)
    const allowed = connectionAllowance({ max, published: this.published(accountId), others, rank: view.rank() })
    const grant = this.#grants.get(accountId)
    if (grant === undefined) {
      this.#grants.set(accountId, { granted: allowed, since: now })
      return allowed
    }
    // Less than granted: the others opened more meanwhile. More: only on a view that has heard
    // every instance since this grant was made or last told (else they may have opened unseen).
    if (allowed < grant.granted || peers.every((id) => view.lastHeard(id) > grant.since)) {
      if (allowed > grant.granted) grant.since = now
      grant.granted = allowed
    }
    return grant.granted
  }

  /** This instance's open connections of the account as it last published them. */
  published(accountId: string): number {
    return this.#publishedOpen.get(accountId) ?? 0
  }

  /** This instance publishes `open` connections of the account now. */
  publishing(accountId: string, open: number, now: number): void {
    const before = this.published(accountId)
    if (open > 0) this.#publishedOpen.set(accountId, open)
    else this.#publishedOpen.delete(accountId)
    const grant = this.#grants.get(accountId)
    // A new count is news the others must hear before this instance's grant may grow again.
    if (open === 0) this.#grants.delete(accountId)
    else if (grant !== undefined && open !== before) grant.since = now
  }

  /** Another instance published `open` connections of the account. */
  heard(from: string, accountId: string, open: number): void {
    let byInstance = this.#othersOpen.get(accountId)
    if (open > 0) {
      if (byInstance === undefined) this.#othersOpen.set(accountId, (byInstance = new Map()))
      byInstance.set(from, open)
    } else if (byInstance !== undefined) {
      byInstance.delete(from)
      if (byInstance.size === 0) this.#othersOpen.delete(accountId)
    }
  }

  /** An instance left: its connections stop counting. */
  left(id: string): void {
    for (const [accountId, byInstance] of this.#othersOpen) {
      byInstance.delete(id)
      if (byInstance.size === 0) this.#othersOpen.delete(accountId)
    }
  }
}
