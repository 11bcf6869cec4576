import { isIP } from 'node:net'
import { BucketTable, type BucketLimit } from '../../actors/rate/bucket-table.js'
import type { Clock } from '../../actors/runtime/clock.js'
import type { DashboardLimitsConfig } from '../config/types.js'
import { ApiError } from './api-errors.js'

/** The kinds of work the dashboard API limits (the names of `dashboard.limits`). */
export type ApiLimitName = Exclude<keyof DashboardLimitsConfig, 'maxTracked'>

/** Who asks: the client's IP address, and the account once signed in. */
export interface ApiClient {
  ip: string
  accountId?: string
}

/** What each limit counts, in the words of its 429. */
const WHAT: Record<ApiLimitName, string> = {
  api: 'calls to the dashboard API',
  signIn: 'sign-in attempts',
  contractChecks: 'contract-wallet signature checks',
  newAccounts: 'new accounts',
  keys: 'key changes',
  invoices: 'plan choices',
  paymentChecks: 'payment checks',
}

/**
 * The dashboard API's rate limits (the host of the buckets in actors/rate/bucket-table.ts): per
 * client IP for everything a stranger can make us do (sign-in attempts, contract signature checks
 * on our nodes, new accounts), and per account too for what a signed-in user can make us append
 * to the log or ask our nodes (keys, invoices, payment checks). In memory, per instance: across N
 * instances behind a load balancer a client gets at most N times the limit.
 *
 * Memory: each limit remembers at most `maxTracked` clients (see BucketTable), so at most
 * 10 × maxTracked buckets in all (IPv6 clients count by their /64: one host owns a whole /64).
 * @example
 * limits.take('signIn', { ip }) // throws ApiError RATE_LIMITED (429, Retry-After)
 */
export class ApiLimits {
  readonly #clock: Clock
  readonly #perIp = new Map<ApiLimitName, BucketTable>()
  readonly #perAccount = new Map<ApiLimitName, BucketTable>()
  readonly #global = new Map<ApiLimitName, FleetShare>()

  /** `fleetSize`: the live instances of the fleet (1 alone); a `global` limit is split between them. */
  constructor(config: DashboardLimitsConfig, clock: Clock, fleetSize: () => number = () => 1) {
    this.#clock = clock
    const { maxTracked, ...limits } = config
    for (const [name, limit] of Object.entries(limits) as Array<[ApiLimitName, { perIp: BucketLimit; perAccount?: BucketLimit; global?: BucketLimit }]>) {
      this.#perIp.set(name, new BucketTable(limit.perIp, { maxEntries: maxTracked }))
      if (limit.perAccount !== undefined) this.#perAccount.set(name, new BucketTable(limit.perAccount, { maxEntries: maxTracked }))
      if (limit.global !== undefined) this.#global.set(name, new FleetShare(limit.global, fleetSize))
    }
  }

  /** Count one call of `name` for the client's IP (and account); throws RATE_LIMITED past a limit. */
  take(name: ApiLimitName, client: ApiClient): void {
    this.#apply(name, client, true)
  }

  /**
   * Count one call of `name` for an account only, whoever asks (a sign-in naming a wallet: its
   * attempts come from any number of IPs); throws RATE_LIMITED past the account's limit.
   */
  takeForAccount(name: ApiLimitName, accountId: string): void {
    const table = this.#perAccount.get(name)
    if (table === undefined) return
    const now = this.#clock.now()
    const r = table.take(accountId, now)
    if (!r.ok) throw limited(name, table.limit, 'this account', r.retryAfterMs)
  }

  /** Throw what `take` would, without counting anything (to refuse before costly work). */
  check(name: ApiLimitName, client: ApiClient): void {
    this.#apply(name, client, false)
  }

  /** Clients remembered now, all limits together (for tests of the bound). */
  get size(): number {
    let n = 0
    for (const table of [...this.#perIp.values(), ...this.#perAccount.values()]) n += table.size
    return n
  }

  #apply(name: ApiLimitName, client: ApiClient, taking: boolean): void {
    const now = this.#clock.now()
    const account = client.accountId === undefined ? undefined : this.#perAccount.get(name)
    // Both are checked before either is taken: a call refused by one limit does not spend the other.
    const checks: Array<[BucketTable, string, string]> = [[this.#perIp.get(name)!, ipLimitKey(client.ip), 'this IP address']]
    if (account !== undefined) checks.push([account, client.accountId!, 'this account'])
    const global = this.#global.get(name)?.table()
    if (global !== undefined) checks.push([global, '*', 'all clients together'])
    for (const [table, key, who] of checks) {
      const r = table.peek(key, now)
      if (!r.ok) {
        if (taking) table.take(key, now) // seen again: a client hammering a limit is not the first one forgotten
        throw limited(name, table.limit, who, r.retryAfterMs)
      }
    }
    if (taking) for (const [table, key] of checks) table.take(key, now)
  }
}

/**
 * A limit for all clients together, split between the live instances of a fleet: each applies
 * 1/N of it (burst / N, one every N × everyMs), so the fleet admits at most the whole, without a
 * round trip per call. The bucket starts afresh when N changes (an instance joined or left).
 */
class FleetShare {
  readonly #limit: BucketLimit
  readonly #fleetSize: () => number
  #n = 0
  #table: BucketTable | undefined

  constructor(limit: BucketLimit, fleetSize: () => number) {
    this.#limit = limit
    this.#fleetSize = fleetSize
  }

  table(): BucketTable {
    const n = Math.max(1, Math.floor(this.#fleetSize()))
    if (this.#table === undefined || n !== this.#n) {
      this.#n = n
      const share = { burst: Math.max(1, Math.floor(this.#limit.burst / n)), everyMs: this.#limit.everyMs * n }
      this.#table = new BucketTable(share, { maxEntries: 1 })
    }
    return this.#table
  }
}

function limited(name: ApiLimitName, limit: BucketLimit, who: string, retryAfterMs: number): ApiError {
  const retryAfterSeconds = Math.max(1, Math.ceil(retryAfterMs / 1000))
  return new ApiError(
    'RATE_LIMITED',
    `Too many ${WHAT[name]} from ${who} (${limit.burst} at once, then one every ${duration(limit.everyMs)}); try again in ${duration(retryAfterSeconds * 1000)}.`,
    {
      details: { limit: name, retryAfterSeconds },
      headers: { 'Retry-After': String(retryAfterSeconds) },
    },
  )
}

function duration(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`
  if (ms >= 60_000 && ms % 60_000 === 0) return `${ms / 60_000} min`
  return `${ms / 1000} s`
}

/**
 * The key a client IP is limited under: an IPv4 address as it is (an IPv4-mapped IPv6 address as
 * IPv4), an IPv6 address by its /64 (a single host is routinely given a whole /64, so limiting
 * its addresses one by one would limit nothing), anything else as given, cut to 64 characters.
 * @example
 * ipLimitKey('2001:db8:1:2:aaaa::1') // '2001:0db8:0001:0002::/64'
 */
export function ipLimitKey(ip: string): string {
  const family = isIP(ip)
  if (family === 4) return ip
  if (family !== 6) return ip.slice(0, 64)
  const groups = ipv6Groups(ip.toLowerCase())
  if (groups.slice(0, 5).every((g) => g === '0000') && groups[5] === 'ffff') {
    const v4 = groups.slice(6).flatMap((g) => [parseInt(g.slice(0, 2), 16), parseInt(g.slice(2), 16)])
    return v4.join('.')
  }
  return `${groups.slice(0, 4).join(':')}::/64`
}

/** The 8 groups of a valid IPv6 address, 4 hex digits each (a trailing dotted IPv4 as 2 groups). */
function ipv6Groups(ip: string): string[] {
  let text = ip.split('%')[0]! // a zone id (fe80::1%eth0) names the interface, not the host
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text)
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number]
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const [head, tail] = text.split('::') as [string, string | undefined]
  const left = head === '' ? [] : head.split(':')
  const right = tail === undefined || tail === '' ? [] : tail.split(':')
  const zeros = tail === undefined ? [] : new Array<string>(8 - left.length - right.length).fill('0')
  return [...left, ...zeros, ...right].map((g) => g.padStart(4, '0'))
}
