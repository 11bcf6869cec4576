import type { Clock } from '../../actors/runtime/clock.js'
import type { EventLog } from '../events/log.js'
import type { Entitlement } from '../events/types.js'
import { generateApiKey } from '../keys/api-key.js'
import type { KeyCipher } from '../keys/key-cipher.js'
import type { PlanCatalog } from '../plans/catalog.js'
import type { StateStore } from '../store/state-store.js'
import { AccountOpenError, BadGraceError, BadNodesError, NoActiveKeyError, UnknownAccountError, UnknownPlanError } from './errors.js'
import { AccountHost, type CatchesUp } from './account-host.js'
import type { NewKey } from './decide.js'
import { accountIdForWallet, normalizeWallet } from './wallet.js'

/**
 * What the account commands need. Each command is decided by the account's decider on the state
 * folded from the account's own stream (AccountHost), and appended at that state's version; with
 * a projector, the store is caught up afterwards so that the caller reads its own writes.
 */
export interface AccountCommandDeps {
  log: EventLog
  store: StateStore
  catalog: PlanCatalog
  cipher: KeyCipher
  clock: Clock
  /** A projector of `log` into `store` (the gateway's, the CLI's), caught up after each command. */
  projector?: CatchesUp
  /** The process's account host (its mailboxes serialize one account's commands); one is made per call when absent. */
  host?: AccountHost
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

/** What opening an account did. */
export interface OpenedAccount {
  accountId: string
  /**
   * `opened`: the account (if new), its plan, nodes and key; `exists`: nothing, the account has a
   * key or a running plan; `private-activated`: the Private Node its owner asked for, the key kept.
   */
  outcome: 'opened' | 'exists' | 'private-activated'
  /** The account's active key now. */
  keyId: string | null
  /** The new key in clear when one was issued (returned once, never stored nor logged). */
  apiKey?: string
  planId: string | null
}

/**
 * Open the account of a wallet: create it if new, activate a plan from now, select its nodes
 * and issue its first key. An account that has a key or a running plan is left as it is (run
 * again, the command changes nothing; a new key is regenerateKey), except to activate a Private
 * Node its owner requested (its key is kept).
 * Emits AccountCreated (a new account), PlanActivated, NodesSelected, KeyIssued (no key yet).
 * @throws BadWalletError, UnknownPlanError, BadNodesError (nothing is appended then)
 * @example
 * const { outcome, accountId, apiKey } = await openAccount(deps, { wallet: '0xAb…', planId: 'tier-1' })
 */
export async function openAccount(deps: AccountCommandDeps, input: CreateAccountInput): Promise<OpenedAccount> {
  const wallet = normalizeWallet(input.wallet)
  const plan = deps.catalog.get(input.planId)
  if (plan === undefined) throw new UnknownPlanError(input.planId, planIds(deps.catalog))
  const nodes = checkNodes(input.nodes ?? [])
  const accountId = accountIdForWallet(wallet)
  const key = newKey(deps)
  const { events, state } = await hostOf(deps).execute(accountId, {
    type: 'OpenAccount',
    wallet,
    plan,
    nodes,
    networks: input.networks,
    key: key.made,
    now: deps.clock.now(),
  })
  const issued = events.some((e) => e.type === 'KeyIssued' && e.keyId === key.made.keyId)
  const outcome = events.length === 0 ? 'exists' : issued ? 'opened' : 'private-activated'
  return { accountId, outcome, keyId: state.activeKeyId, ...(issued ? { apiKey: key.clear } : {}), planId: state.plan?.planId ?? null }
}

/**
 * openAccount for a wallet whose account is new (or has no key nor plan): the new key.
 * @throws AccountOpenError when the account was open already (nothing changed), and what openAccount throws
 */
export async function createAccount(deps: AccountCommandDeps, input: CreateAccountInput): Promise<CreatedAccount> {
  const out = await openAccount(deps, input)
  if (out.apiKey === undefined) throw new AccountOpenError(out.accountId)
  return { accountId: out.accountId, apiKey: out.apiKey, keyId: out.keyId! }
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
  const key = newKey(deps)
  await hostOf(deps).execute(input.accountId, { type: 'RegenerateKey', key: key.made, graceMs, now: deps.clock.now() })
  return { apiKey: key.clear, keyId: key.made.keyId }
}

/**
 * Change the nodes an account uses (Tiers 1 and 2 choose theirs; others may narrow theirs).
 * Emits NodesSelected.
 * @throws UnknownAccountError, BadNodesError (the selection does not fit the plan)
 */
export async function selectNodes(deps: AccountCommandDeps, input: SelectNodesInput): Promise<{ accountId: string; nodes: Entitlement[] }> {
  const nodes = checkNodes(input.nodes)
  await hostOf(deps).execute(input.accountId, { type: 'SelectNodes', nodes, networks: input.networks, now: deps.clock.now() })
  return { accountId: input.accountId, nodes }
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

/** A new key: its clear text for the caller (once), and what the events keep (hash, cipher). */
export function newKey(deps: Pick<AccountCommandDeps, 'cipher'>): { clear: string; made: NewKey } {
  const key = generateApiKey()
  return { clear: key.key, made: { keyId: key.keyId, keyHash: key.keyHash, keyCipher: deps.cipher.encrypt(key.key) } }
}

/**
 * The host the command runs on: the caller's (a gateway's, so its mailboxes apply), else a new one
 * that catches the caller's store up after the command with the caller's projector (the caller
 * reads its own writes).
 */
export function hostOf(deps: Pick<AccountCommandDeps, 'log' | 'catalog' | 'projector' | 'host'>): AccountHost {
  if (deps.host) return deps.host
  return new AccountHost({ log: deps.log, catalog: deps.catalog, projector: deps.projector })
}

/** Entitlements as given, checked and de-duplicated (same pair twice would be the same fact). */
function checkNodes(nodes: readonly Entitlement[]): Entitlement[] {
  if (!Array.isArray(nodes)) throw new BadNodesError(`not a list: ${JSON.stringify(nodes)}; expected a list of { network, kind: 'full' | 'archive' }`)
  const seen = new Map<string, Entitlement>()
  for (const n of nodes) {
    if (n === null || typeof n !== 'object' || typeof n.network !== 'string' || n.network === '') {
      throw new BadNodesError(`${JSON.stringify(n)} has no network; expected { network, kind: 'full' | 'archive' }`)
    }
    if (n.kind !== 'full' && n.kind !== 'archive')
      throw new BadNodesError(`${JSON.stringify(n)} has kind ${JSON.stringify(n.kind)}; expected 'full' or 'archive'`)
    seen.set(`${n.network}:${n.kind}`, { network: n.network, kind: n.kind })
  }
  return [...seen.values()]
}

function planIds(catalog: PlanCatalog): string[] {
  return catalog.plans.map((p) => p.id)
}
