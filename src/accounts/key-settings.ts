import { normalizeDomains } from '../keys/domain-allowlist.js'
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
