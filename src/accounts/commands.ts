import type { Clock } from '../../actors/runtime/clock.js'
import type { EventLog } from '../events/log.js'
import { makeEvent } from '../events/make-event.js'
import type {
  AccountCreated,
  Entitlement,
  KeyIssued,
  KeyRevoked,
  NodesSelected,
  PlanActivated,
  TollgateEvent,
} from '../events/types.js'
import { generateApiKey } from '../keys/api-key.js'
import type { KeyCipher } from '../keys/key-cipher.js'
import type { PlanCatalog } from '../plans/catalog.js'
import { Projector } from '../projections/projector.js'
import type { StateStore } from '../store/state-store.js'
import { BadGraceError, BadNodesError, NoActiveKeyError, UnknownAccountError, UnknownPlanError } from './errors.js'
import { accountIdForWallet, normalizeWallet } from './wallet.js'
import { selectionProblem } from '../plans/entitlements.js'

/**
 * What the account commands need. Each command decides from the projected state (caught up with
 * the log first), appends its events, then catches the store up again so that the caller sees
 * its own writes (the key it got back is found by hash on return).
 */
export interface AccountCommandDeps {
  log: EventLog
  store: StateStore
  catalog: PlanCatalog
  cipher: KeyCipher
  clock: Clock
  /** A projector of `log` into `store` (the gateway's, the CLI's); one is made per call when absent. */
  projector?: Projector
}

export interface CreateAccountInput {
  /** 0x + 40 hex digits, any case. */
  wallet: string
  planId: string
  /** The (network, kind) pairs to allow; absent or empty: all the plan allows (plans that let the user choose need them). */
  nodes?: Entitlement[]
  /** The networks the gateway serves, to check the nodes against (absent: not checked). */
  networks?: readonly string[]
}

export interface SelectNodesInput {
  accountId: string
  nodes: Entitlement[]
  networks?: readonly string[]
}

export interface CreatedAccount {
  accountId: string
  /** The key in clear: returned once to the caller, never stored nor logged (only hash and cipher are). */
  apiKey: string
  keyId: string
}

export interface RegenerateKeyInput {
  accountId: string
  /** How long the old key keeps working, in ms (default 0: it stops now). */
  graceMs?: number
}

export interface RegeneratedKey {
  apiKey: string
  keyId: string
}

/**
 * Create the account of a wallet (or reuse it), activate a plan from now, select its nodes and
 * issue a new API key; an account that already had an active key has it revoked now.
 * Emits AccountCreated (only for a new account), PlanActivated, NodesSelected, KeyIssued and, if
 * needed, KeyRevoked { reason: 'regenerated' }.
 * @throws BadWalletError, UnknownPlanError, BadNodesError (nothing is appended then)
 * @example
 * const { accountId, apiKey } = await createAccount(deps, { wallet: '0xAb…', planId: 'tier-1' })
 */
export async function createAccount(deps: AccountCommandDeps, input: CreateAccountInput): Promise<CreatedAccount> {
  const wallet = normalizeWallet(input.wallet)
  const plan = deps.catalog.get(input.planId)
  if (plan === undefined) throw new UnknownPlanError(input.planId, planIds(deps.catalog))
  const nodes = checkNodes(input.nodes ?? [])
  const problem = selectionProblem(plan, nodes, input.networks ?? nodes.map((n) => n.network))
  if (problem !== undefined) throw new BadNodesError(problem)
  const projector = projectorOf(deps)
  await projector.catchUp()

  const accountId = accountIdForWallet(wallet)
  const existing = deps.store.account(accountId)
  const now = deps.clock.now()
  const key = generateApiKey()
  const events: TollgateEvent[] = []
  if (existing === undefined) events.push(makeEvent<AccountCreated>({ type: 'AccountCreated', accountId, wallet }, now))
  events.push(
    makeEvent<PlanActivated>(
      { type: 'PlanActivated', accountId, planId: plan.id, startsAt: now, endsAt: plan.periodMs === null ? null : now + plan.periodMs },
      now,
    ),
    makeEvent<NodesSelected>({ type: 'NodesSelected', accountId, nodes }, now),
    issue(deps, accountId, key, now),
  )
  if (existing?.activeKeyId) events.push(revoke(accountId, existing.activeKeyId, now, now))
  await deps.log.append(events)
  await projector.catchUp()
  return { accountId, apiKey: key.key, keyId: key.keyId }
}

/**
 * Issue a new key for an account and revoke its active one from `now + graceMs`.
 * Emits KeyIssued and, when the account had an active key, KeyRevoked { reason: 'regenerated' }.
 * @throws UnknownAccountError, BadGraceError (nothing is appended then)
 * @example
 * const { apiKey } = await regenerateKey(deps, { accountId, graceMs: 60_000 })
 */
export async function regenerateKey(deps: AccountCommandDeps, input: RegenerateKeyInput): Promise<RegeneratedKey> {
  const graceMs = input.graceMs ?? 0
  if (typeof graceMs !== 'number' || !Number.isFinite(graceMs) || graceMs < 0) throw new BadGraceError(graceMs)
  const projector = projectorOf(deps)
  await projector.catchUp()
  const account = deps.store.account(input.accountId)
  if (account === undefined) throw new UnknownAccountError(input.accountId)

  const now = deps.clock.now()
  const key = generateApiKey()
  // The new key first: an account must never be left without an active key between the two.
  const events: TollgateEvent[] = [issue(deps, account.accountId, key, now)]
  // A new key keeps the old one's domain allowlist: regenerating after a leak must not lift it.
  const domains = account.activeKeyId ? deps.store.keyById(account.activeKeyId)?.domains : undefined
  if (domains !== undefined && domains.length > 0) {
    events.push(makeEvent({ type: 'DomainsRestricted', accountId: account.accountId, keyId: key.keyId, domains: [...domains] }, now))
  }
  if (account.activeKeyId) events.push(revoke(account.accountId, account.activeKeyId, now + graceMs, now))
  await deps.log.append(events)
  await projector.catchUp()
  return { apiKey: key.key, keyId: key.keyId }
}

/**
 * Change the nodes an account uses (Tiers 1 and 2 choose theirs; others may narrow theirs).
 * Emits NodesSelected.
 * @throws UnknownAccountError, BadNodesError (the selection does not fit the plan)
 */
export async function selectNodes(deps: AccountCommandDeps, input: SelectNodesInput): Promise<{ accountId: string; nodes: Entitlement[] }> {
  const nodes = checkNodes(input.nodes)
  const projector = projectorOf(deps)
  await projector.catchUp()
  const account = deps.store.account(input.accountId)
  if (account === undefined) throw new UnknownAccountError(input.accountId)
  const plan = account.plan ? deps.catalog.get(account.plan.planId) : undefined
  if (plan === undefined) throw new BadNodesError('the account has no active plan to choose nodes for')
  const problem = selectionProblem(plan, nodes, input.networks ?? nodes.map((n) => n.network))
  if (problem !== undefined) throw new BadNodesError(problem)
  await deps.log.append([makeEvent<NodesSelected>({ type: 'NodesSelected', accountId: account.accountId, nodes }, deps.clock.now())])
  await projector.catchUp()
  return { accountId: account.accountId, nodes }
}

/**
 * The account's active key in clear (decrypted from its stored cipher), for its owner to see
 * again. Reads the store as it is: no catch-up.
 * @throws UnknownAccountError, NoActiveKeyError, KeyDecryptError (another TOLLGATE_SECRET)
 */
export function showKey(deps: Pick<AccountCommandDeps, 'store' | 'cipher'>, accountId: string): string {
  const account = deps.store.account(accountId)
  if (account === undefined) throw new UnknownAccountError(accountId)
  const key = account.activeKeyId === null ? undefined : deps.store.keyById(account.activeKeyId)
  if (key === undefined) throw new NoActiveKeyError(accountId)
  return deps.cipher.decrypt(key.keyCipher)
}

function issue(deps: AccountCommandDeps, accountId: string, key: ReturnType<typeof generateApiKey>, now: number): KeyIssued {
  return makeEvent<KeyIssued>(
    { type: 'KeyIssued', accountId, keyId: key.keyId, keyHash: key.keyHash, keyCipher: deps.cipher.encrypt(key.key) },
    now,
  )
}

function revoke(accountId: string, keyId: string, effectiveAt: number, now: number): KeyRevoked {
  return makeEvent<KeyRevoked>({ type: 'KeyRevoked', accountId, keyId, reason: 'regenerated', effectiveAt }, now)
}

function projectorOf(deps: AccountCommandDeps): Projector {
  return deps.projector ?? new Projector(deps.store, deps.log)
}

/** Entitlements as given, checked and de-duplicated (same pair twice would be the same fact). */
function checkNodes(nodes: readonly Entitlement[]): Entitlement[] {
  if (!Array.isArray(nodes)) throw new BadNodesError(`not a list: ${JSON.stringify(nodes)}; expected a list of { network, kind: 'full' | 'archive' }`)
  const seen = new Map<string, Entitlement>()
  for (const n of nodes) {
    if (n === null || typeof n !== 'object' || typeof n.network !== 'string' || n.network === '') {
      throw new BadNodesError(`${JSON.stringify(n)} has no network; expected { network, kind: 'full' | 'archive' }`)
    }
    if (n.kind !== 'full' && n.kind !== 'archive') throw new BadNodesError(`${JSON.stringify(n)} has kind ${JSON.stringify(n.kind)}; expected 'full' or 'archive'`)
    seen.set(`${n.network}:${n.kind}`, { network: n.network, kind: n.kind })
  }
  return [...seen.values()]
}

function planIds(catalog: PlanCatalog): string[] {
  return catalog.plans.map((p) => p.id)
}
