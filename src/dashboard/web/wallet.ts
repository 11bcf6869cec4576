import { createSiweMessage } from 'viem/siwe'
import { encodeFunctionData, erc20Abi, getAddress, toHex } from 'viem'
import { WalletFailure } from './errors'

/** An EIP-1193 provider, as browser wallets inject it. */
interface Eip1193 {
  request(args: { method: string; params?: unknown[] }): Promise<unknown>
  on?(event: string, listener: (...args: unknown[]) => void): void
}

declare global {
  interface Window {
    ethereum?: Eip1193
  }
}

export function hasWallet(): boolean {
  return window.ethereum !== undefined
}

function provider(): Eip1193 {
  if (!window.ethereum)
    throw new WalletFailure('No browser wallet found: install one (MetaMask, Rabby, Coinbase Wallet…) or open this page in your wallet app’s browser.')
  return window.ethereum
}

async function ask<T>(method: string, params?: unknown[], context?: { chainId?: number }): Promise<T> {
  try {
    return (await provider().request({ method, params })) as T
  } catch (err) {
    throw new WalletFailure(walletErrorText(err, context))
  }
}

/** EIP-1193 and EIP-1474 error codes, said plainly. */
function walletErrorText(err: unknown, context: { chainId?: number } = {}): string {
  if (err instanceof WalletFailure) return err.message
  const code = (err as { code?: number })?.code
  switch (code) {
    case 4001:
      return 'You refused the request in your wallet. Nothing was signed or sent.'
    case 4100:
      return 'Your wallet has not allowed this site: unlock it and connect again.'
    case 4200:
      return 'Your wallet cannot do this (it does not support the request).'
    case 4900:
    case 4901:
      return 'Your wallet is not connected to a network: check it and try again.'
    case 4902:
      return `Wrong network: your wallet does not know chain ${context.chainId ?? ''}. Add that network in your wallet, then try again.`
    case -32002:
      return 'Your wallet already has a request waiting: open your wallet to answer it.'
    case -32603:
      return 'Your wallet could not do it; check that you have enough funds (tokens and gas), then try again.'
    default:
      return `Your wallet said: ${(err as Error)?.message ?? String(err)}`
  }
}

export async function connectWallet(): Promise<`0x${string}`> {
  const accounts = await ask<string[]>('eth_requestAccounts')
  if (!accounts?.[0]) throw new WalletFailure('Your wallet shared no account: unlock it and try again.')
  return getAddress(accounts[0])
}

export async function walletChainId(): Promise<number> {
  return Number(await ask<string>('eth_chainId'))
}

/**
 * The EIP-4361 message for this page (its own host and origin: the gateway checks them). Its
 * Expiration Time is when the session it opens ends (the gateway honours it), so the wallet shows
 * the user how long the sign-in lasts.
 */
export function siweMessage(address: `0x${string}`, chainId: number, nonce: string, sessionTtlMs = 10 * 60_000): string {
  const now = new Date()
  return createSiweMessage({
    domain: location.host,
    address,
    statement: 'Sign in to the Tollgate dashboard. This costs nothing and sends no transaction.',
    uri: location.origin,
    version: '1',
    chainId,
    nonce,
    issuedAt: now,
    expirationTime: new Date(now.getTime() + sessionTtlMs),
  })
}

export async function signMessage(address: `0x${string}`, message: string): Promise<string> {
  return ask<string>('personal_sign', [toHex(message), address])
}

/** Make sure the wallet is on `chainId` (asks it to switch); a refusal is "wrong network". */
export async function ensureChain(chainId: number, name: string): Promise<void> {
  if ((await walletChainId()) === chainId) return
  try {
    await provider().request({ method: 'wallet_switchEthereumChain', params: [{ chainId: toHex(chainId) }] })
  } catch (err) {
    const code = (err as { code?: number })?.code
    if (code === 4902) throw new WalletFailure(walletErrorText(err, { chainId }))
    throw new WalletFailure(`Wrong network: payments are made on ${name} (chain ${chainId}). Switch your wallet to it, then press Pay again.`)
  }
  if ((await walletChainId()) !== chainId) throw new WalletFailure(`Wrong network: switch your wallet to ${name} (chain ${chainId}), then press Pay again.`)
}

/** Ask the wallet to send the ERC-20 transfer of an invoice; resolves with the transaction hash. */
export async function sendTokenTransfer(from: `0x${string}`, token: string, to: string, amount: string): Promise<string> {
  const data = encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [getAddress(to), BigInt(amount)] })
  return ask<string>('eth_sendTransaction', [{ from, to: getAddress(token), data }])
}

/** Tell the page when the wallet switches account or network. */
export function onWalletChange(listener: () => void): void {
  window.ethereum?.on?.('accountsChanged', listener)
  window.ethereum?.on?.('chainChanged', listener)
}
