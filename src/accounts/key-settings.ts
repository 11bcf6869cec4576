import { BadDomainsError } from './errors.js'
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
