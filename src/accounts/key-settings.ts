import { makeEvent } from '../events/make-event.js'
import type { Projector } from '../projections/projector.js'
import { normalizeDomains } from '../keys/domain-allowlist.js'
import type { AccountCommandDeps } from './commands.js'
import { NoActiveKeyError, UnknownAccountError } from './errors.js'

/**
 * Restrict the account's active key to browser domains (DomainsRestricted); an empty list lifts
 * the restriction. Returns the list as stored (normalised).
 * @throws UnknownAccountError, NoActiveKeyError, BadDomainsError
 */
export async function restrictDomains(deps: AccountCommandDeps & { projector: Projector }, input: { accountId: string; domains: unknown }): Promise<string[]> {
  const domains = normalizeDomains(input.domains)
  await deps.projector.catchUp()
  const account = deps.store.account(input.accountId)
  if (account === undefined) throw new UnknownAccountError(input.accountId)
  if (account.activeKeyId === null) throw new NoActiveKeyError(input.accountId)
  await deps.log.append([makeEvent({ type: 'DomainsRestricted', accountId: account.accountId, keyId: account.activeKeyId, domains }, deps.clock.now())])
  await deps.projector.catchUp()
  return domains
}
