import { createHash } from 'node:crypto'
import { BadWalletError } from './errors.js'

const ADDRESS = /^0x[0-9a-fA-F]{40}$/

/**
 * The wallet address in lower case; throws BadWalletError unless it is 0x + 40 hex digits.
 * Lower case because a checksummed (EIP-55) and a plain spelling are the same wallet: without
 * it one wallet could own two accounts.
 */
export function normalizeWallet(wallet: string): string {
  if (typeof wallet !== 'string' || !ADDRESS.test(wallet)) throw new BadWalletError(wallet)
  return wallet.toLowerCase()
}

/**
 * The account id of a wallet: `acc_` + 16 hex of sha256(lower-case address). Derived, not
 * random, so that creating the account twice yields the same AccountCreated event id, which the
 * log stores once.
 * @example accountIdForWallet('0xAbC…') // 'acc_3f2a…' (20 characters)
 */
export function accountIdForWallet(wallet: string): string {
  return 'acc_' + createHash('sha256').update(normalizeWallet(wallet)).digest('hex').slice(0, 16)
}

/** Who vouched for the signature: the address's own key, or a contract (deployed or not) on the message's chain. */
export type SignerKind = 'eoa' | 'contract'
