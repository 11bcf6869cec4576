import { createHash, randomBytes } from 'node:crypto'
import type { PublicClient } from 'viem'
import type { Clock } from '../../actors/runtime/clock.js'
import type { EventLog } from '../events/log.js'
import { makeEvent } from '../events/make-event.js'
import type { TollgateEvent } from '../events/types.js'
import type { Projector } from '../projections/projector.js'
import { claimKeys } from '../projections/billing-projection.js'
import type { StateStore } from '../store/state-store.js'
import { accountIdForWallet } from '../accounts/wallet.js'
import { checkSiweMessage, type SiweExpectations } from './check-message.js'
import { NONCE_TTL_MS, type SiweNonces } from './nonces.js'
import { SiweError } from './siwe-error.js'
import { verifySiweSignature } from './verify-signature.js'

export interface SignInDeps {
  log: EventLog
  store: StateStore
  projector: Projector
  clock: Clock
  nonces: SiweNonces
  /** Domain, origin and chains from our configuration. */
  expect: Omit<SiweExpectations, 'now' | 'maxAgeMs'>
  /** A viem client on our own nodes of a chain id, undefined when we serve no such chain. */
  clientFor(chainId: number): PublicClient | undefined
  sessionTtlMs: number
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
 * (ours, fresh, unused), the signature (EOA, ERC-1271, ERC-6492), then append AccountCreated for a
 * new wallet and SignedIn. Whether the nonce was still unused is decided by the log: both a
 * replay and a concurrent double submit append a SignedIn with the same id, and only the first in
 * the log opens a session (the projection ignores the rest). After catching up, a request whose
 * session is not the one recorded for the nonce lost, and is refused.
 * @throws SiweError
 */
export async function signIn(deps: SignInDeps, input: { message: string; signature: string }): Promise<SignedInSession> {
  const now = deps.clock.now()
  const checked = checkSiweMessage(input.message, { ...deps.expect, now, maxAgeMs: NONCE_TTL_MS })
  deps.nonces.check(checked.nonce, now)
  // Cheap refusal before any node is asked; the log decides for real below.
  if (deps.store.claim(claimKeys.nonce(checked.nonce)) !== undefined) throw nonceUsed()
  await verifySiweSignature(deps.clientFor(checked.chainId), checked.address, input.message, input.signature)

  const wallet = checked.address.toLowerCase()
  const accountId = accountIdForWallet(wallet)
  await deps.projector.catchUp()
  const created = deps.store.account(accountId) === undefined
  const token = randomBytes(32).toString('base64url')
  const sessionHash = sessionHashOf(token)
  const expiresAt = now + deps.sessionTtlMs
  const events: TollgateEvent[] = []
  if (created) events.push(makeEvent({ type: 'AccountCreated', accountId, wallet }, now))
  events.push(makeEvent({ type: 'SignedIn', accountId, wallet, nonce: checked.nonce, sessionHash, expiresAt }, now))
  await deps.log.append(events)
  await deps.projector.catchUp()
  if (deps.store.claim(claimKeys.nonce(checked.nonce))?.by !== sessionHash) throw nonceUsed()
  return { token, accountId, wallet, expiresAt, created }
}

function nonceUsed(): SiweError {
  return new SiweError('NONCE_USED', 'this sign-in message was already used; sign in again')
}
