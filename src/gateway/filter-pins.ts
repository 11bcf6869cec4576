import type { Clock } from '../../actors/runtime/clock.js'
import type { NodeKind } from '../core/node-kind.js'
import type { LimitsConfig } from '../config/types.js'
import { GatewayError } from '../errors/registry.js'
import type { Answer } from '../upstream/answer.js'
import { filterCapRefusal, type FilterCapLimit } from './filter-cap-refusal.js'
import { saysFilterGone } from './filter-gone.js'

/**
 * Filters (eth_newFilter, eth_newBlockFilter, eth_newPendingTransactionFilter) live on the node
 * that created them: asked elsewhere, eth_getFilterChanges answers "filter not found". So each
 * filter id is pinned to its node and to the key that created it (another key must not read it).
 * Nodes drop idle filters after 5 minutes (geth's, Erigon's and anvil's default; Nethermind and
 * Besu keep them longer): the pins expire the same way, so that a pin never outlives its filter
 * by more than a poll. A pin the node forgot earlier (a restart) is dropped when the node says so.
 */
export const FILTER_IDLE_MS = 5 * 60_000

/**
 * A filter asked about within this long is being polled, and is never evicted to make room for
 * another: ethers and viem poll every 4 s, web3.js every second, a client polling once a block
 * on a 12-second chain five times a minute. Without it, a key at its cap that makes one more
 * filter would drop one its own client still reads.
 */
export const FILTER_POLLED_MS = 60_000

/**
 * Bound on the pins of this instance, all keys together: a key is bounded by its cap, but the
 * number of keys is not. At it, a new filter is refused rather than another key's evicted.
 */
export const MAX_FILTER_PINS = 100_000

/** How many live filters (made and being made) one key, and one account, may hold on one network (a reload changes them). */
export type FilterCaps = Pick<LimitsConfig, 'maxFiltersPerKey' | 'maxFiltersPerAccount'>

/** One filter the gateway knows, on its network and node. */
export interface FilterPin {
  readonly network: string
  /** As the node wrote it (the pins are found by its lower case). */
  readonly filterId: string
  readonly node: string
  readonly kind: NodeKind
  lastUsed: number
}

/** Room for one more filter (and the key's own idle filter dropped for it, to uninstall on its node), or the cap that refuses it. */
export type FilterRoom = { ok: true; evicted?: FilterPin } | { ok: false; limit: FilterCapLimit; held: number; max: number }

/** What a filter method does with its filter (the method table's `filter`). */
export type FilterOp = 'create' | 'use' | 'uninstall'

/**
 * A filter call let through (FilterPins.pin): the node it must go to (undefined for a new filter:
 * any node of its kind), and the key's own idle filter dropped to make room for a new one, which
 * the caller uninstalls on its node. Handed back with the node's answer (FilterPins.settle).
 */
export interface PinnedCall {
  readonly op: FilterOp
  readonly network: string
  readonly keyId: string
  readonly filterId: unknown
  readonly node: string | undefined
  readonly evicted?: FilterPin
}

/** A new filter's id in the node's answer (`"result":"0x…"`), read without parsing the answer. */
const FILTER_ID = /"result"\s*:\s*"([^"]+)"/

/** One key's filters on one network: least recently used first (a use moves one to the end), and those being made. */
interface KeyFilters {
  /** Its place in FilterPins' map: network and key id. */
  readonly at: string
  readonly pins: Map<string, FilterPin>
  making: number
  readonly account: AccountFilters
}

/** One account's filters on one network: its keys' (the live keys of a regeneration). */
interface AccountFilters {
  /** Its place in FilterPins' map: network and account id. */
  readonly at: string
  readonly keys: Set<KeyFilters>
  held: number
}

/**
 * The filters of every key, with each key's and account's share: a key holds at most `perKey`
 * live filters on a network and its account `perAccount`. At its cap the key's own least recently
 * used filter makes room when it is idle (not polled for FILTER_POLLED_MS); when every one is
 * being polled, the new filter is refused. Nothing one key does evicts another account's filter.
 */
export class FilterPins {
  /** By network and key id. */
  readonly #byKey = new Map<string, KeyFilters>()
  /** By network and account id. */
  readonly #byAccount = new Map<string, AccountFilters>()
  /** Filters held, all keys together: pinned and being made. */
  #held = 0
  #making = 0
  readonly #refused: Record<FilterCapLimit, number> = { key: 0, account: 0, instance: 0 }
  #evicted = 0

  constructor(private readonly clock: Clock) {}

  /**
   * Where a filter call goes, asked before it goes: a new filter takes room in its key's and
   * account's shares (an idle one of theirs is given up for it, or it is refused with
   * TOO_MANY_FILTERS); a call on a filter goes to the node that holds it, or is answered
   * FILTER_NOT_FOUND when this key holds no such filter; eth_uninstallFilter frees its room.
   * @param params the call's params (a filter id first, for `use` and `uninstall`)
   * @example
   * const pinned = pins.pin('use', 'eth-1', ['0x1'], key.record, limits)
   * if (!(pinned instanceof GatewayError)) answer = await send(pinned.node)
   * pins.settle(pinned, answer)
   */
  pin(
    op: FilterOp,
    network: string,
    params: unknown,
    key: { readonly keyId: string; readonly accountId: string },
    caps: FilterCaps,
  ): PinnedCall | GatewayError {
    const keyId = key.keyId
    if (op === 'create') {
      const room = this.reserve(network, keyId, key.accountId, caps)
      if (!room.ok) return filterCapRefusal(network, room.limit, room.held, room.max)
      return { op, network, keyId, filterId: undefined, node: undefined, evicted: room.evicted }
    }
    const filterId = Array.isArray(params) ? params[0] : undefined
    const node = this.nodeOf(network, filterId, keyId)
    // As geth says it, so that clients (ethers) recreate the filter.
    if (node === undefined) return new GatewayError('FILTER_NOT_FOUND')
    if (op === 'uninstall') this.forget(network, filterId, keyId)
    return { op, network, keyId, filterId, node }
  }

  /**
   * The end of a pinned call, with the node's answer (undefined: no answer came): the new filter
   * it made is pinned to that node (or its room given back); a filter the node says it no longer
   * holds (its own idle time-out, a restart) is forgotten, so the key's share has room again.
   */
  settle(call: PinnedCall, reply: Answer | undefined): void {
    if (call.op === 'create') {
      const filterId = reply === undefined || reply.isError ? undefined : FILTER_ID.exec(reply.text)?.[1]
      return this.made(call.network, call.keyId, reply === undefined || filterId === undefined ? undefined : { filterId, node: reply.node, kind: reply.kind })
    }
    // An answer of no error can say so too (Hardhat's `null`: see saysFilterGone).
    if (reply !== undefined && saysFilterGone(reply)) this.forget(call.network, call.filterId, call.keyId)
  }

  /**
   * Room for one filter of `keyId` on `network`, held as being made until `made` is called (so
   * that filters asked for at once count together). A key or account at its cap gives up its
   * least recently used idle filter: the caller uninstalls it on its node.
   */
  reserve(network: string, keyId: string, accountId: string, caps: FilterCaps): FilterRoom {
    const mine = this.#keyFilters(network, keyId, accountId)
    let evicted: FilterPin | undefined
    if (mine.pins.size + mine.making >= caps.maxFiltersPerKey) {
      evicted = this.#evictIdle([mine])
      if (evicted === undefined) return this.#refuse(mine, 'key', mine.pins.size + mine.making, caps.maxFiltersPerKey)
    }
    const account = mine.account
    if (account.held >= caps.maxFiltersPerAccount) {
      // The key's own idle filters first, then its account's other live keys': one tenant.
      evicted = this.#evictIdle([mine]) ?? this.#evictIdle(account.keys)
      if (evicted === undefined) return this.#refuse(mine, 'account', account.held, caps.maxFiltersPerAccount)
    }
    if (this.#held >= MAX_FILTER_PINS) this.sweep()
    if (this.#held >= MAX_FILTER_PINS) return this.#refuse(mine, 'instance', this.#held, MAX_FILTER_PINS)
    mine.making++
    this.#making++
    account.held++
    this.#held++
    return evicted === undefined ? { ok: true } : { ok: true, evicted }
  }

  /** The end of a `reserve`: the filter the node made, or undefined when it made none. */
  made(network: string, keyId: string, filter: { filterId: string; node: string; kind: NodeKind } | undefined): void {
    const mine = this.#byKey.get(`${network}|${keyId}`)
    if (mine === undefined) return
    mine.making--
    this.#making--
    if (filter === undefined) return this.#release(mine, 1)
    const id = filter.filterId.toLowerCase()
    // A node numbering its filters (Nethermind: 0x0, 0x1…) may give this key an id it holds on another node: that older one is lost to it.
    const replaced = mine.pins.delete(id)
    mine.pins.set(id, { network, filterId: filter.filterId, node: filter.node, kind: filter.kind, lastUsed: this.clock.now() })
    if (replaced) this.#release(mine, 1)
  }

  /** The node holding the filter, when this key created it and it has not expired; a use makes it the key's most recent. */
  nodeOf(network: string, filterId: unknown, keyId: string): string | undefined {
    if (typeof filterId !== 'string') return undefined
    const mine = this.#byKey.get(`${network}|${keyId}`)
    const id = filterId.toLowerCase()
    const pin = mine?.pins.get(id)
    if (mine === undefined || pin === undefined) return undefined
    const now = this.clock.now()
    if (now - pin.lastUsed > FILTER_IDLE_MS) {
      this.#drop(mine, id)
      return undefined
    }
    pin.lastUsed = now
    mine.pins.delete(id)
    mine.pins.set(id, pin)
    return pin.node
  }

  /** The key uninstalled the filter, or its node said it has none such: the key's share has room again. */
  forget(network: string, filterId: unknown, keyId: string): void {
    if (typeof filterId !== 'string') return
    const mine = this.#byKey.get(`${network}|${keyId}`)
    if (mine?.pins.has(filterId.toLowerCase())) this.#drop(mine, filterId.toLowerCase())
  }

  /** Drop the pins idle past FILTER_IDLE_MS (their nodes dropped the filters). */
  sweep(): void {
    const now = this.clock.now()
    for (const mine of this.#byKey.values()) {
      for (const [id, pin] of mine.pins) if (now - pin.lastUsed > FILTER_IDLE_MS) this.#drop(mine, id)
    }
  }

  /** Filters pinned now, all keys together. */
  get size(): number {
    return this.#held - this.#making
  }

  stats(): { pinned: number; refused: Readonly<Record<FilterCapLimit, number>>; evicted: number } {
    return { pinned: this.size, refused: { ...this.#refused }, evicted: this.#evicted }
  }

  #keyFilters(network: string, keyId: string, accountId: string): KeyFilters {
    const at = `${network}|${keyId}`
    let mine = this.#byKey.get(at)
    if (mine !== undefined) return mine
    const accountAt = `${network}|${accountId}`
    let account = this.#byAccount.get(accountAt)
    if (account === undefined) {
      account = { at: accountAt, keys: new Set(), held: 0 }
      this.#byAccount.set(accountAt, account)
    }
    mine = { at, pins: new Map(), making: 0, account }
    account.keys.add(mine)
    this.#byKey.set(at, mine)
    return mine
  }

  /** The least recently used filter of these keys, when it is not being polled, dropped. */
  #evictIdle(keys: Iterable<KeyFilters>): FilterPin | undefined {
    let oldest: { mine: KeyFilters; pin: FilterPin } | undefined
    for (const mine of keys) {
      const first = mine.pins.values().next().value
      if (first !== undefined && (oldest === undefined || first.lastUsed < oldest.pin.lastUsed)) oldest = { mine, pin: first }
    }
    if (oldest === undefined || this.clock.now() - oldest.pin.lastUsed < FILTER_POLLED_MS) return undefined
    this.#drop(oldest.mine, oldest.pin.filterId.toLowerCase())
    this.#evicted++
    return oldest.pin
  }

  #refuse(mine: KeyFilters, limit: FilterCapLimit, held: number, max: number): FilterRoom {
    this.#refused[limit]++
    this.#release(mine, 0)
    return { ok: false, limit, held, max }
  }

  #drop(mine: KeyFilters, id: string): void {
    mine.pins.delete(id)
    this.#release(mine, 1)
  }

  /** `n` fewer filters held by the key; a key and account holding nothing are forgotten. */
  #release(mine: KeyFilters, n: number): void {
    mine.account.held -= n
    this.#held -= n
    if (mine.pins.size > 0 || mine.making > 0) return
    this.#byKey.delete(mine.at)
    mine.account.keys.delete(mine)
    if (mine.account.keys.size === 0) this.#byAccount.delete(mine.account.at)
  }
}
