import { formatUnits, parseUnits } from 'viem'
import type { ChainRpc } from '../chain/chain-rpc.js'
import { ChainRpcError } from '../chain/errors.js'
import { PaymentError } from '../accounts/errors.js'

/** keccak256("Transfer(address,address,uint256)"): topic 0 of an ERC-20 (and ERC-721) Transfer. */
export const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef'
/** decimals() */
const DECIMALS_SELECTOR = '0x313ce567'

/**
 * Reads a token's decimals from the contract once per process (they never change), through our
 * own node. A stablecoin with 6 decimals and one with 18 must be billed differently: a fixed
 * guess would make one of them cost a trillion times too much or too little.
 */
export class TokenDecimals {
  readonly #cache = new Map<string, Promise<number>>()

  get(rpc: ChainRpc, token: string): Promise<number> {
    const key = `${rpc.network}:${token.toLowerCase()}`
    let found = this.#cache.get(key)
    if (found === undefined) {
      found = readDecimals(rpc, token)
      // A failure is not cached: the next invoice asks the node again.
      found.catch(() => this.#cache.delete(key))
      this.#cache.set(key, found)
    }
    return found
  }
}

async function readDecimals(rpc: ChainRpc, token: string): Promise<number> {
  let result: string
  try {
    result = await rpc.request<string>('eth_call', [{ to: token, data: DECIMALS_SELECTOR }, 'latest'])
  } catch (cause) {
    if (cause instanceof ChainRpcError)
      throw new PaymentError(
        'PAYMENTS_DISABLED',
        `the payment token ${token} on ${rpc.network} does not answer decimals(): check payments.token`,
        {},
        { cause },
      )
    throw new PaymentError('CHAIN_UNAVAILABLE', `the ${rpc.network} node did not answer; try again in a moment`, {}, { cause })
  }
  if (typeof result !== 'string' || result === '0x')
    throw new PaymentError('PAYMENTS_DISABLED', `no ERC-20 contract at ${token} on ${rpc.network}: check payments.token`)
  const decimals = Number(BigInt(result))
  if (!Number.isInteger(decimals) || decimals > 36) throw new PaymentError('PAYMENTS_DISABLED', `the token at ${token} says it has ${decimals} decimals`)
  return decimals
}

/** A USD price in the token's smallest unit (1 token = 1 USD). */
export function amountFor(priceUsd: number, decimals: number): bigint {
  return parseUnits(String(priceUsd), decimals)
}

/** An amount in the smallest unit as a readable number of USD ("49.5"). */
export function usdOf(amount: bigint | string, decimals: number): string {
  return formatUnits(BigInt(amount), decimals)
}
