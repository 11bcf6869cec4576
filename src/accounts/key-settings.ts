import { BadDomainsError, BadJwtKeyRegistrationError, BadRestrictionsError } from './errors.js'
import { normalizeJwtKey, type JwtPublicKey } from '../keys/jwt-keys.js'
import { BadJwtKeyError } from '../keys/errors.js'
import { normalizeRestrictions, RESTRICTION_TYPES, type KeyRestrictions, type RestrictionType } from '../keys/key-restrictions.js'
import { BadRestrictionError } from '../keys/errors.js'
import { hostOf, type AccountCommandDeps } from './commands.js'

/**
 * Restrict the account's active key to browser domains (DomainsRestricted); an empty list lifts
 * the restriction. Returns the list as stored (normalised).
 * @throws UnknownAccountError, NoActiveKeyError, BadDomainsError
 */
export async function restrictDomains(deps: AccountCommandDeps, input: { accountId: string; domains: unknown }): Promise<string[]> {
  const domains = normalizeDomains(input.domains)
  await hostOf(deps).execute(input.accountId, { type: 'RestrictDomains', domains, now: deps.clock.now() })
  return domains
}

/** Most domains on one key: the check runs on every call of a browser key. */
const MAX_DOMAINS = 20

const ENTRY = /^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*(:\d{1,5})?$/

/**
 * Check and normalise an allowlist as the owner typed it: lower case, no scheme or path,
 * duplicates dropped. `https://app.example.com/x` becomes `app.example.com`.
 * @throws BadDomainsError
 */
export function normalizeDomains(input: unknown): string[] {
  if (!Array.isArray(input)) throw new BadDomainsError('not a list')
  const out = new Set<string>()
  for (const raw of input) {
    if (typeof raw !== 'string') throw new BadDomainsError(`${JSON.stringify(raw)} is not text`)
    let entry = raw.trim().toLowerCase()
    if (entry === '') continue
    entry = entry.replace(/^[a-z][a-z0-9+.-]*:\/\//, '').replace(/\/.*$/, '')
    if (entry.length > 260 || !ENTRY.test(entry)) throw new BadDomainsError(`${JSON.stringify(raw)} is not a host name`)
    out.add(entry)
  }
  if (out.size > MAX_DOMAINS) throw new BadDomainsError(`${out.size} domains, at most ${MAX_DOMAINS}`)
  return [...out]
}

/**
 * Restrict the account's active key (KeyRestricted): the types given replace the key's lists of
 * those types (an empty list lifts that rule), the types left out are kept; `replace` lifts every
 * type not given (the dashboard's form sends the whole set). Returns the key's restrictions now.
 * @throws UnknownAccountError, NoActiveKeyError, BadRestrictionsError
 * @example
 * await restrictKey(deps, { accountId, restrictions: { methods: ['eth_call', 'eth_getLogs'], contracts: ['0x…'] } })
 */
export async function restrictKey(deps: AccountCommandDeps, input: { accountId: string; restrictions: unknown; replace?: boolean }): Promise<KeyRestrictions> {
  let set: KeyRestrictions
  try {
    set = normalizeRestrictions(input.restrictions)
  } catch (err) {
    if (err instanceof BadRestrictionError) throw new BadRestrictionsError(err.message, { cause: err })
    throw err
  }
  const types: RestrictionType[] = RESTRICTION_TYPES.filter((t) => input.replace === true || (input.restrictions as Record<string, unknown>)[t] != null)
  const { state } = await hostOf(deps).execute(input.accountId, { type: 'RestrictKey', set, types, now: deps.clock.now() })
  return (state.activeKeyId === null ? undefined : state.keys.get(state.activeKeyId)?.restrictions) ?? {}
}

/**
 * Register a public key the account's tokens may be signed with (JwtKeyRegistered). Returns the
 * account's keys now.
 * @throws UnknownAccountError, BadJwtKeyRegistrationError (private key, RSA under 2048 bits, an
 * unknown algorithm, a fourth key, a kid taken)
 * @example
 * await registerJwtKey(deps, { accountId, kid: 'backend-1', alg: 'ES256', publicKey: pem })
 */
export async function registerJwtKey(
  deps: AccountCommandDeps,
  input: { accountId: string; kid: unknown; alg: unknown; publicKey: unknown },
): Promise<JwtPublicKey[]> {
  let key: JwtPublicKey
  try {
    key = normalizeJwtKey(input)
  } catch (err) {
    if (err instanceof BadJwtKeyError) throw new BadJwtKeyRegistrationError(err.message, { cause: err })
    throw err
  }
  const { state } = await hostOf(deps).execute(input.accountId, { type: 'RegisterJwtKey', key, now: deps.clock.now() })
  return state.jwtKeys
}

/** Remove a registered public key (JwtKeyRemoved): tokens it signed stop passing. @throws BadJwtKeyRegistrationError for an unknown kid */
export async function removeJwtKey(deps: AccountCommandDeps, input: { accountId: string; kid: string }): Promise<JwtPublicKey[]> {
  const { state } = await hostOf(deps).execute(input.accountId, { type: 'RemoveJwtKey', kid: input.kid, now: deps.clock.now() })
  return state.jwtKeys
}

/**
 * Whether the account's active key is refused without a signed token (KeyTokenRequired).
 * @throws NoActiveKeyError, BadJwtKeyRegistrationError (required with no public key registered)
 */
export async function requireToken(deps: AccountCommandDeps, input: { accountId: string; required: boolean }): Promise<boolean> {
  const { state } = await hostOf(deps).execute(input.accountId, { type: 'RequireToken', required: input.required, now: deps.clock.now() })
  return (state.activeKeyId === null ? undefined : state.keys.get(state.activeKeyId)?.tokenRequired) ?? false
}
