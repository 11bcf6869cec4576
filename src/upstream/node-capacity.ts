import { NodeBusy } from './errors.js'

/**
 * Who a call is for, as the capacity needs it: the account (its turn, its share of the slots) and
 * its plan (the time waited, by plan, on /metrics). The store's account record is one: the call
 * path hands it on as it is, with no object made per call.
 */
export interface CallFor {
  readonly accountId: string
  readonly plan: { readonly planId: string } | null
}

/** A call waiting for a slot: woken with the slot taken, or refused when its wait is over. */
interface Waiter {
  readonly account: string
  readonly plan: string
  readonly since: number
  resolve(): void
  reject(err: Error): void
  timer: NodeJS.Timeout | undefined
}

/** Figures of one node's capacity, for /metrics (altogether, and by plan). */
export interface CapacityCounters {
  /** Calls that waited for a slot, and their waits in ms altogether. */
  waited: number
  waitedMs: number
  /** Calls refused after waiting longer than the wait allowed (NODES_BUSY). */
  refused: number
}

/**
 * How many calls one node takes at once from this instance (`upstreams[].maxInFlight`), and who
 * gets a slot when it is full. A real node's RPC server has a few workers and a queue: past them,
 * a call waits in the node's queue behind whatever came first, so one tenant's flood of traces
 * makes every other tenant wait seconds. Here the calls past the limit wait in the gateway
 * instead, one queue per account, and a slot that frees goes to the accounts in turn, not to the
 * one that sent the most. One account never holds more than three quarters of the slots (at
 * least one, and one fewer than all when there are two or more): a slot is always left for the
 * others, so a read does not wait for a trace to end.
 *
 * In a fleet (workers or instances sharing the nodes) each instance takes its share:
 * max(1, floor(maxInFlight / instances)). A call that waited longer than `waitMs` (or its own
 * time left) gets NodeBusy: the gateway answers 503 with Retry-After. Calls of the gateway itself
 * (head polls, chain checks, the finality poll) are not counted: they are few and small.
 * @example
 * const capacity = new NodeCapacity({ maxInFlight: 4, waitMs: 1000, instances: () => 1, node: 'a' })
 * await capacity.acquire(account, 1000) // a slot for this account record: call the node, then
 * capacity.release(account)
 */
export class NodeCapacity {
  readonly maxInFlight: number
  /** The longest a call waits for a slot, in ms. */
  readonly waitMs: number
  readonly counters: CapacityCounters = { waited: 0, waitedMs: 0, refused: 0 }
  /** The same figures by plan id ('none': an account without a plan); plan ids come from the catalog. */
  readonly byPlan = new Map<string, CapacityCounters>()
  readonly #instances: () => number
  readonly #node: string
  #inUse = 0
  /** Slots each account holds now (accounts with none are not kept). */
  readonly #held = new Map<string, number>()
  /** Waiting calls per account; the Map's order is the turn (an account served goes to the end). */
  readonly #queues = new Map<string, Waiter[]>()
  #waiting = 0

  constructor(opts: { maxInFlight: number; waitMs: number; instances: () => number; node: string }) {
    this.maxInFlight = opts.maxInFlight
    this.waitMs = opts.waitMs
    this.#instances = opts.instances
    this.#node = opts.node
  }

  /** Slots of this instance now: its share of maxInFlight. */
  limit(): number {
    return Math.max(1, Math.floor(this.maxInFlight / Math.max(1, this.#instances())))
  }

  /** Calls in flight through this capacity now, and waiting. */
  get inUse(): number {
    return this.#inUse
  }
  get waiting(): number {
    return this.#waiting
  }

  /** A call for `caller` would get a slot at once. */
  hasRoom(caller: CallFor): boolean {
    const account = caller.accountId
    const limit = this.limit()
    return this.#inUse < limit && (this.#held.get(account) ?? 0) < perAccount(limit) && !this.#queues.has(account)
  }

  /**
   * Take a slot for a call of `account`: undefined when taken at once (no promise on the common
   * path), else a promise that resolves once a slot is this call's, or rejects with NodeBusy after
   * `waitMs`. Each slot taken must be given back with release().
   */
  acquire(caller: CallFor, waitMs: number): Promise<void> | undefined {
    const account = caller.accountId
    if (this.hasRoom(caller)) {
      this.#take(account)
      return undefined
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { account, plan: caller.plan?.planId ?? 'none', since: performance.now(), resolve, reject, timer: undefined }
      waiter.timer = setTimeout(() => this.#expire(waiter), Math.max(0, waitMs))
      const queue = this.#queues.get(account)
      if (queue === undefined) this.#queues.set(account, [waiter])
      else queue.push(waiter)
      this.#waiting++
    })
  }

  /** Give back a slot of `caller`'s account, and hand the freed room to the next account in turn. */
  release(caller: CallFor): void {
    const account = caller.accountId
    this.#inUse--
    const held = (this.#held.get(account) ?? 1) - 1
    if (held <= 0) this.#held.delete(account)
    else this.#held.set(account, held)
    this.#serve()
  }

  #take(account: string): void {
    this.#inUse++
    this.#held.set(account, (this.#held.get(account) ?? 0) + 1)
  }

  /** Wake waiting calls while there is room: the accounts in turn, each within its own share. */
  #serve(): void {
    const limit = this.limit()
    const most = perAccount(limit)
    while (this.#inUse < limit && this.#waiting > 0) {
      let next: Waiter | undefined
      for (const [account, queue] of this.#queues) {
        if ((this.#held.get(account) ?? 0) >= most) continue
        next = queue.shift()
        this.#queues.delete(account)
        // Served: to the end of the turn, if it has more waiting.
        if (queue.length > 0) this.#queues.set(account, queue)
        break
      }
      if (next === undefined) return // every waiting account holds its share already
      this.#waiting--
      clearTimeout(next.timer)
      this.#take(next.account)
      const waitedMs = performance.now() - next.since
      for (const c of [this.counters, this.#ofPlan(next.plan)]) {
        c.waited++
        c.waitedMs += waitedMs
      }
      next.resolve()
    }
  }

  #ofPlan(plan: string): CapacityCounters {
    let c = this.byPlan.get(plan)
    if (c === undefined) this.byPlan.set(plan, (c = { waited: 0, waitedMs: 0, refused: 0 }))
    return c
  }

  #expire(waiter: Waiter): void {
    const queue = this.#queues.get(waiter.account)
    const at = queue?.indexOf(waiter) ?? -1
    if (queue === undefined || at < 0) return
    queue.splice(at, 1)
    if (queue.length === 0) this.#queues.delete(waiter.account)
    this.#waiting--
    this.counters.refused++
    this.#ofPlan(waiter.plan).refused++
    const waitedMs = Math.round(performance.now() - waiter.since)
    waiter.reject(new NodeBusy({ node: this.#node, waitedMs, limit: this.limit() }))
  }
}

/** The most slots one account holds: three quarters, at least 1, and one fewer than all from 2 up. */
export function perAccount(limit: number): number {
  if (limit <= 1) return 1
  return Math.max(1, Math.min(limit - 1, Math.floor((limit * 3) / 4)))
}
