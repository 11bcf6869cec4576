import { BlockList, isIP } from 'node:net'
import { BadRestrictionError } from './errors.js'

/**
 * What a key may be used for besides its plan, beside its domain allowlist (domain-allowlist.ts):
 * methods (allowed, or denied), contract addresses, client IPs and CIDRs, user agents. Each list
 * absent or empty: no rule of that type. Entries of one type are OR'd (any one lets the call
 * through); types are AND'd (every rule the key has must let it through).
 *
 * A key carrying its restrictions in a browser is still a key anyone can read: the IP and
 * user-agent rules stop other programs only as far as those cannot choose their address or
 * header; the method and contract rules bound what a leaked key can do, whoever sends it.
 */
export interface KeyRestrictions {
  /** Methods the key may call (`eth_call`, or a namespace `debug_*`); absent: any. */
  methods?: string[]
  /** Methods the key may not call (same forms); never together with `methods`. */
  deniedMethods?: string[]
  /** Lower-case 0x addresses the key's calls may name (docs/keys.md says where, method by method). */
  contracts?: string[]
  /** Client addresses (IPv4, IPv6) or CIDR ranges the key may be used from. */
  ips?: string[]
  /** Texts one of which the request's User-Agent must contain (case-sensitive). */
  userAgents?: string[]
}

export type RestrictionType = keyof KeyRestrictions

/**
 * Most entries per type. The per-call checks are a set lookup (methods, contracts) or a short
 * scan (user agents, namespaces): the bound keeps a key's record small (it is read on every call
 * and sent to every instance) and a check cheap whatever the owner types.
 */
export const RESTRICTION_BOUNDS: Readonly<Record<RestrictionType, number>> = Object.freeze({
  methods: 100,
  deniedMethods: 100,
  contracts: 50,
  ips: 50,
  userAgents: 20,
})

export const RESTRICTION_TYPES: readonly RestrictionType[] = Object.freeze(['methods', 'deniedMethods', 'contracts', 'ips', 'userAgents'])

const METHOD = /^[a-z][a-z0-9]*_(\*|[A-Za-z0-9]+)$/
const ADDRESS = /^0x[0-9a-f]{40}$/
/** Printable ASCII, as a User-Agent header is; no longer than a real one's product token. */
const USER_AGENT = /^[\x20-\x7e]{1,200}$/

/**
 * Check and normalise restrictions as an owner gave them: entries trimmed, addresses and CIDRs
 * lower-cased, duplicates dropped, empty lists left out. `undefined` for a type leaves it out.
 * @throws BadRestrictionError naming the type and the entry
 * @example
 * normalizeRestrictions({ methods: ['eth_call', 'eth_getLogs'], contracts: ['0xAbC…'] })
 */
export function normalizeRestrictions(input: unknown): KeyRestrictions {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) throw new BadRestrictionError('restrictions must be an object')
  const raw = input as Record<string, unknown>
  for (const name of Object.keys(raw)) {
    if (!(RESTRICTION_TYPES as readonly string[]).includes(name)) {
      throw new BadRestrictionError(`unknown restriction ${JSON.stringify(name)}; the types are ${RESTRICTION_TYPES.join(', ')}`)
    }
  }
  const out: KeyRestrictions = {}
  for (const type of RESTRICTION_TYPES) {
    const list = raw[type]
    if (list === undefined || list === null) continue
    if (!Array.isArray(list)) throw new BadRestrictionError(`${type} must be a list`)
    const seen = new Set<string>()
    for (const entry of list) {
      if (typeof entry !== 'string') throw new BadRestrictionError(`${type}: ${JSON.stringify(entry)} is not text`)
      const e = entry.trim()
      if (e === '') continue
      seen.add(normalizeEntry(type, e))
    }
    if (seen.size > RESTRICTION_BOUNDS[type]) throw new BadRestrictionError(`${type}: ${seen.size} entries, at most ${RESTRICTION_BOUNDS[type]}`)
    if (seen.size > 0) out[type] = [...seen]
  }
  if (out.methods !== undefined && out.deniedMethods !== undefined) {
    throw new BadRestrictionError('methods and deniedMethods together: give the methods the key may call, or those it may not, not both')
  }
  return out
}

function normalizeEntry(type: RestrictionType, e: string): string {
  switch (type) {
    case 'methods':
    case 'deniedMethods':
      if (!METHOD.test(e)) throw new BadRestrictionError(`${type}: ${JSON.stringify(e)} is not a method name (eth_call) or a namespace (debug_*)`)
      return e
    case 'contracts': {
      const a = e.toLowerCase()
      if (!ADDRESS.test(a)) throw new BadRestrictionError(`contracts: ${JSON.stringify(e)} is not an address (0x and 40 hex digits)`)
      return a
    }
    case 'ips':
      return normalizeIpEntry(e)
    case 'userAgents':
      if (!USER_AGENT.test(e)) throw new BadRestrictionError(`userAgents: ${JSON.stringify(e.slice(0, 40))} is not printable ASCII of at most 200 characters`)
      return e
  }
}

function normalizeIpEntry(e: string): string {
  const slash = e.indexOf('/')
  const address = (slash === -1 ? e : e.slice(0, slash)).toLowerCase()
  const family = isIP(address)
  if (family === 0) throw new BadRestrictionError(`ips: ${JSON.stringify(e)} is not an IP address or a CIDR range (203.0.113.7, 10.0.0.0/8, 2001:db8::/32)`)
  if (slash === -1) return address
  const bits = e.slice(slash + 1)
  const max = family === 4 ? 32 : 128
  if (!/^\d{1,3}$/.test(bits) || Number(bits) > max) throw new BadRestrictionError(`ips: ${JSON.stringify(e)} has a prefix length outside 0-${max}`)
  return `${address}/${Number(bits)}`
}

/** Whether the restrictions have no rule at all (the key record then carries none). */
export function unrestricted(r: KeyRestrictions | undefined): boolean {
  return r === undefined || RESTRICTION_TYPES.every((t) => r[t] === undefined || r[t]!.length === 0)
}

/** The restrictions in the form the checks read, built once per record (see compiledOf). */
export interface CompiledRestrictions {
  readonly source: KeyRestrictions
  readonly methods: MethodMatcher | undefined
  readonly deniedMethods: MethodMatcher | undefined
  readonly contracts: ReadonlySet<string> | undefined
  readonly ips: BlockList | undefined
  readonly userAgents: readonly string[] | undefined
}

interface MethodMatcher {
  readonly exact: ReadonlySet<string>
  /** Namespaces given as `ns_*`, kept as `ns_`. */
  readonly prefixes: readonly string[]
}

const compiled = new WeakMap<KeyRestrictions, CompiledRestrictions>()

/**
 * The compiled form of a record's restrictions, made on first use and kept as long as the record
 * is (a changed restriction comes as a new record from the projection, so it is compiled anew).
 */
export function compiledOf(r: KeyRestrictions): CompiledRestrictions {
  let c = compiled.get(r)
  if (c === undefined) {
    c = {
      source: r,
      methods: r.methods === undefined ? undefined : methodMatcher(r.methods),
      deniedMethods: r.deniedMethods === undefined ? undefined : methodMatcher(r.deniedMethods),
      contracts: r.contracts === undefined ? undefined : new Set(r.contracts),
      ips: r.ips === undefined ? undefined : blockListOf(r.ips),
      userAgents: r.userAgents,
    }
    compiled.set(r, c)
  }
  return c
}

function methodMatcher(list: readonly string[]): MethodMatcher {
  return { exact: new Set(list.filter((m) => !m.endsWith('_*'))), prefixes: list.filter((m) => m.endsWith('_*')).map((m) => m.slice(0, -1)) }
}

function matches(m: MethodMatcher, method: string): boolean {
  if (m.exact.has(method)) return true
  for (const p of m.prefixes) if (method.startsWith(p)) return true
  return false
}

/** Whether the key's method rule lets `method` through. */
export function methodAllowed(c: CompiledRestrictions, method: string): boolean {
  if (c.methods !== undefined && !matches(c.methods, method)) return false
  if (c.deniedMethods !== undefined && matches(c.deniedMethods, method)) return false
  return true
}

function blockListOf(entries: readonly string[]): BlockList {
  const list = new BlockList()
  for (const e of entries) {
    const slash = e.indexOf('/')
    const address = slash === -1 ? e : e.slice(0, slash)
    const type = isIP(address) === 4 ? 'ipv4' : 'ipv6'
    if (slash === -1) list.addAddress(address, type)
    else list.addSubnet(address, Number(e.slice(slash + 1)), type)
  }
  return list
}

/**
 * Whether the key's IP rule lets a client at `ip` through. An IPv4 client seen as an IPv6-mapped
 * address (`::ffff:203.0.113.7`, as a dual-stack socket reports it) is matched as IPv4 too, so an
 * owner's `203.0.113.0/24` holds whichever way the socket was opened.
 */
export function ipAllowed(c: CompiledRestrictions, ip: string): boolean {
  if (c.ips === undefined) return true
  const family = isIP(ip)
  if (family === 0) return false
  if (family === 4) return c.ips.check(ip, 'ipv4')
  if (c.ips.check(ip, 'ipv6')) return true
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)
  return mapped !== null && c.ips.check(mapped[1]!, 'ipv4')
}

/** Whether the key's user-agent rule lets a request with this User-Agent through (absent header: ''). */
export function userAgentAllowed(c: CompiledRestrictions, userAgent: string): boolean {
  if (c.userAgents === undefined) return true
  for (const entry of c.userAgents) if (userAgent.includes(entry)) return true
  return false
}

/** Every list of a restriction set, empty where it has no rule (the shape of a KeyRestricted event). */
export type RestrictionLists = { [T in RestrictionType]: string[] }

/** The restrictions of a KeyRestricted event (its empty lists left out). */
export function restrictionsOf(lists: RestrictionLists): KeyRestrictions {
  const out: KeyRestrictions = {}
  for (const type of RESTRICTION_TYPES) if (lists[type].length > 0) out[type] = [...lists[type]]
  return out
}

/** The lists of a KeyRestricted event for a restriction set. */
export function listsOf(r: KeyRestrictions): RestrictionLists {
  return {
    methods: [...(r.methods ?? [])],
    deniedMethods: [...(r.deniedMethods ?? [])],
    contracts: [...(r.contracts ?? [])],
    ips: [...(r.ips ?? [])],
    userAgents: [...(r.userAgents ?? [])],
  }
}
