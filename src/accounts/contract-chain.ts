import { SiweError } from './errors.js'

/**
 * Refuse a contract wallet's sign-in on another chain than the one the account is bound to (the
 * chain of its first contract sign-in). A contract wallet is an address on one chain: the same
 * address on another chain can be another contract with another owner (a counterfactual wallet
 * deployed there by someone else, a factory replayed on a new chain), whose ERC-1271 answer says
 * nothing about the account's owner. Without this, whoever controlled the address on any chain we
 * serve signed in to the account and read its key. An EOA's signature is its key's, on every chain.
 * @throws SiweError ACCOUNT_ON_OTHER_CHAIN
 */
export function refuseOtherChain(boundTo: number | null, chainId: number): void {
  if (boundTo === null || boundTo === chainId) return
  throw new SiweError(
    'ACCOUNT_ON_OTHER_CHAIN',
    `this account belongs to a contract wallet on chain ${boundTo}, and a contract wallet's signature counts only on its own chain: switch your wallet to chain ${boundTo} and sign in again`,
  )
}
