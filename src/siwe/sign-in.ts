import { createHash } from 'node:crypto'
import type { Clock } from '../../actors/runtime/clock.js'
import type { EventLog } from '../events/log.js'
import type { ChainRpc } from '../chain/chain-rpc.js'
import type { Projector } from '../projections/projector.js'
import type { PlanCatalog } from '../plans/catalog.js'
import { AccountHost } from '../accounts/account-host.js'
import { accountIdForWallet } from '../accounts/wallet.js'
import { checkSiweMessage, type SiweExpectations } from './check-message.js'
import { NONCE_TTL_MS, type SiweNonces } from './nonces.js'
import { refuseOtherChain } from '../accounts/contract-chain.js'
import type { SessionTokens } from './session-tokens.js'
import { SiweError } from '../accounts/errors.js'
import { verifySiweSignature } from './verify-signature.js'

export interface SignInDeps {
  log: EventLog
  catalog: PlanCatalog
  projector: Projector
  /** The process's account host (its mailboxes); one is made per call when absent. */
  host?: AccountHost
  clock: Clock
  nonces: SiweNonces
  /** Domain, origin and chains from our configuration. */
  expect: Omit<SiweExpectations, 'now' | 'maxAgeMs'>
  /** Our own nodes of a chain id (for contract wallets), undefined when we serve no such chain. */
  rpcFor(chainId: number): ChainRpc | undefined
  /** Gas cap of a contract wallet's signature check. */
  signatureGas: number
  /** The caller's limits on what a sign-in makes us do; absent: none (the command line, tests). */
  guards?: SignInGuards
  /** Signs the session tokens (so that a token we did not issue is refused without the log). */
  tokens: SessionTokens
  sessionTtlMs: number
}

/** Limits a sign-in checks before costly work; each throws to refuse (the dashboard: a 429). */
export interface SignInGuards {
  /** Before each contract wallet's signature check on our node (an eth_call). */
  contractCheck(): void
  /** Before our node is asked about a signature that is not the wallet's own key's (the wallet's attempts, from any IP). */
  walletCheck(accountId: string): void
  /** Once the signature holds, when the wallet has no account yet: would its account be allowed? */
  mayCreateAccount(): void
  /** Just before the sign-in that creates an account is appended: count it. */
  createsAccount(): void
}

export interface SignedInSession {
  /** The session token for the cookie: returned once, only its hash is stored. */
  token: string
  accountId: string
  wallet: string
  expiresAt: number
  /** This sign-in created the account. */
  created: boolean
}

/** hex SHA-256 of a session token: what events and the store keep. */
export function sessionHashOf(token: string): string {
  return createHash('sha256').update(token).digest('hex')
}

/**
 * Sign in with Ethereum (EIP-4361): check the message against our configuration, the nonce
 * (ours, fresh, not tried before in this process: it is spent by this attempt, whatever comes of
 * it), the signature (EOA, ERC-1271, ERC-6492) before anything of the account is read, then
 * append AccountCreated for a new wallet and SignedIn, decided on the account's own stream: a
 * nonce the account already signed in with is refused, a contract wallet's signature from another
 * chain than the account's is refused, and a replay racing its original appends at the same
 * version, so the log takes one and the other is decided again and refused. The session ends
 * when the message's Expiration Time does, if that comes before `sessionTtlMs`.
 * @throws SiweError, or what a guard throws
 */
export async function signIn(deps: SignInDeps, input: { message: string; signature: string }): Promise<SignedInSession> {
  const now = deps.clock.now()
  const checked = checkSiweMessage(input.message, { ...deps.expect, now, maxAgeMs: NONCE_TTL_MS })
  deps.nonces.spend(checked.nonce, deps.nonces.check(checked.nonce, now), now)
  const wallet = checked.address.toLowerCase()
  const accountId = accountIdForWallet(wallet)
  const check = {
    rpc: deps.rpcFor(checked.chainId),
    gas: deps.signatureGas,
    beforeContractCall: () => deps.guards?.contractCheck(),
    beforeNodeCheck: () => deps.guards?.walletCheck(accountId),
  }
  const signer = await verifySiweSignature(check, checked.address, input.message, input.signature)

  const host = deps.host ?? new AccountHost({ log: deps.log, catalog: deps.catalog, projector: deps.projector })
  // Cheap refusals before the append; the log decides for real below.
  const before = await host.load(accountId)
  if (before.nonces.has(checked.nonce)) throw new SiweError('NONCE_USED', 'this sign-in message was already used; sign in again')
  if (signer === 'contract') refuseOtherChain(before.contractChainId, checked.chainId)
  if (!before.exists) {
    deps.guards?.mayCreateAccount()
    deps.guards?.createsAccount()
  }

  const expiresAt = Math.min(now + deps.sessionTtlMs, checked.expiresAt ?? Number.POSITIVE_INFINITY)
  const token = deps.tokens.issue(expiresAt)
  const sessionHash = sessionHashOf(token)
  const { events } = await host.execute(accountId, {
    type: 'SignIn',
    wallet,
    nonce: checked.nonce,
    sessionHash,
    expiresAt,
    chainId: checked.chainId,
    signer,
    now,
  })
  return { token, accountId, wallet, expiresAt, created: events.some((e) => e.type === 'AccountCreated') }
}
