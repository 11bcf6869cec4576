/** The caps on the distinct logs filters of one hub (one network, or one dedicated pool). */
export interface LogsFilterCaps {
  /** Distinct logs filters one owner (key) may hold on this hub (ws.maxLogsFiltersPerKey). */
  maxLogsFiltersPerKey: number
  /** Distinct logs filters one account's keys together may hold on this hub (ws.maxLogsFiltersPerAccount). */
  maxLogsFiltersPerAccount: number
  /** Distinct logs filters subscribed upstream on this hub, all owners together (ws.maxLogsFiltersPerNetwork). */
  maxLogsFiltersPerNetwork: number
}

/** Who holds a logs filter: a key (`owner`) and its account. */
export interface LogsFilterHolder {
  readonly owner: string
  readonly account: string
}

/** The cap that refused a new logs filter (see LogsFilterRefused). */
export type LogsFilterLimit = 'key' | 'account' | 'network' | 'share'

/**
 * A new logs filter past a cap: the owner's distinct filters (`key`), its account's (`account`),
 * the network's upstream ones (`network`), or the account's share of what the network has free
 * (`share`: `held` the account's, `max` the network's free ones).
 */
export interface LogsFilterRefused {
  limit: LogsFilterLimit
  held: number
  max: number
}

/**
 * The caps and shares of one hub's `logs` filters. Each distinct filter is an upstream
 * subscription that the node matches against every block's logs; without a cap, one key's 50
 * connections × 100 subscriptions were 5,000 of them on our nodes. A filter is counted once per
 * holder however many client subscriptions use it, so reusing a filter is always free.
 * @example
 * const refused = quota.refusal(filter, sink, hubHasIt) // { limit: 'account', held: 100, max: 100 }
 * if (refused === undefined) quota.hold(sink, filter, 1) // before the first await
 */
export class LogsFilterQuota {
  readonly #caps: LogsFilterCaps
  /** Each owner's logs filters: filter (SubscriptionRequest.key) → its client subscriptions on it, those being made included. */
  readonly #byOwner = new Map<string, Map<string, number>>()
  /** The same by account: the keys of one account (a regeneration's live keys) share its cap. */
  readonly #byAccount = new Map<string, Map<string, number>>()
  /** Shared logs subscriptions, open or opening (the upstream ones of the hub). */
  #upstream = 0
  readonly #refused: Record<LogsFilterLimit, number> = { key: 0, account: 0, network: 0, share: 0 }

  /** `caps` is read at each check: a reload's new caps apply at once. */
  constructor(caps: LogsFilterCaps) {
    this.#caps = caps
  }

  /**
   * Why `holder` may not add logs filter `filter` now, or undefined: a filter it holds already adds
   * nothing to its caps' counts, nor one its account holds, nor one the hub has upstream already
   * (`upstream`) to the network's.
   */
  refusal(filter: string, holder: LogsFilterHolder, upstream: boolean): LogsFilterRefused | undefined {
    const owned = this.#byOwner.get(holder.owner)
    if (owned?.has(filter)) return undefined
    const perKey = this.#caps.maxLogsFiltersPerKey
    if (owned !== undefined && owned.size >= perKey) return this.#refuse('key', owned.size, perKey)
    const accounts = this.#byAccount.get(holder.account)
    if (accounts?.has(filter)) return undefined
    const perAccount = this.#caps.maxLogsFiltersPerAccount
    const held = accounts?.size ?? 0
    if (held >= perAccount) return this.#refuse('account', held, perAccount)
    if (upstream) return undefined
    const perNetwork = this.#caps.maxLogsFiltersPerNetwork
    if (this.#upstream >= perNetwork) return this.#refuse('network', this.#upstream, perNetwork)
    // The account's share: holding more than the network has free, it takes none of the rest. A
    // few accounts at their caps then leave free filters for the others (k greedy accounts stop
    // near perNetwork / (k + 1) each); without it, 50 keys of 100 filters filled the network.
    const free = perNetwork - this.#upstream
    if (held > free) return this.#refuse('share', held, free)
    return undefined
  }

  /** `holder`'s key (and account) holds `delta` more (or fewer) client subscriptions on logs filter `filter`. */
  hold(holder: LogsFilterHolder, filter: string, delta: 1 | -1): void {
    holdIn(this.#byOwner, holder.owner, filter, delta)
    holdIn(this.#byAccount, holder.account, filter, delta)
  }

  /** The hub opened a shared logs subscription upstream (it counts from its first subscribe on). */
  upstreamOpened(): void {
    this.#upstream++
  }

  /** The hub forgot a shared logs subscription (its last client left, or its first subscribe failed). */
  upstreamClosed(): void {
    this.#upstream--
  }

  /** New logs filters refused so far, by the cap that refused them. */
  refusedCounts(): Record<LogsFilterLimit, number> {
    return { ...this.#refused }
  }

  /** The hub stopped: nothing is held any more (the refusal counts stay, as the hub's stats do). */
  clear(): void {
    this.#byOwner.clear()
    this.#byAccount.clear()
    this.#upstream = 0
  }

  #refuse(limit: LogsFilterLimit, held: number, max: number): LogsFilterRefused {
    this.#refused[limit]++
    return { limit, held, max }
  }
}

/** `who` holds `delta` more (or fewer) client subscriptions on `filter`: its distinct filters are the inner map's keys. */
function holdIn(byWho: Map<string, Map<string, number>>, who: string, filter: string, delta: 1 | -1): void {
  let owned = byWho.get(who)
  if (owned === undefined) {
    if (delta < 0) return
    owned = new Map()
    byWho.set(who, owned)
  }
  const n = (owned.get(filter) ?? 0) + delta
  if (n > 0) owned.set(filter, n)
  else owned.delete(filter)
  if (owned.size === 0) byWho.delete(who)
}
