import type { ChainRpc } from '../chain/chain-rpc.js'
import { ChainRpcError } from '../chain/errors.js'
import { PaymentError } from '../accounts/errors.js'
import { TRANSFER_TOPIC, usdOf } from './token.js'

export interface TransferExpectation {
  txHash: string
  /** Lower-case addresses. */
  token: string
  treasury: string
  from: string
  /** Smallest unit. */
  minAmount: bigint
  decimals: number
  confirmations: number
  /** A transfer (log index of this tx) already paid an invoice: it is skipped. */
  isUsed?: (logIndex: number) => boolean
}

export interface VerifiedTransfer {
  txHash: string
  logIndex: number
  amount: bigint
  blockNumber: number
  blockHash: string
  /** The block's timestamp, ms since the epoch. */
  minedAt: number
}

interface Log {
  address: string
  topics: string[]
  data: string
  logIndex: string
  removed?: boolean
}
interface Receipt {
  status: string
  blockNumber: string
  blockHash: string
  logs: Log[]
}

const TX_HASH = /^0x[0-9a-fA-F]{64}$/

/**
 * Check, through our own node, that transaction `txHash` paid what is expected:
 * the receipt succeeded; it has a `Transfer` log of the token with exactly three topics (an ERC-20
 * transfer: an ERC-721 one has four, the token id being indexed) from the wallet to the treasury,
 * not yet used, for at least the amount; its block has at least `confirmations` blocks (itself
 * included) and is still the canonical block at that height (a node that served a receipt of
 * an orphaned block, or a reorg between our calls, must not count).
 * @throws PaymentError: NOT_FOUND and UNCONFIRMED (not yet), or why it can never pay
 */
export async function verifyTransfer(rpc: ChainRpc, expect: TransferExpectation): Promise<VerifiedTransfer> {
  if (typeof expect.txHash !== 'string' || !TX_HASH.test(expect.txHash)) {
    throw new PaymentError('BAD_TX_HASH', 'that is not a transaction hash (0x followed by 64 hex digits)')
  }
  const txHash = expect.txHash.toLowerCase()
  const receipt = await ask<Receipt | null>(rpc, 'eth_getTransactionReceipt', [txHash])
  if (receipt === null) {
    throw new PaymentError('NOT_FOUND', 'the payment is not on the chain yet: it may still be waiting to be mined', { need: expect.confirmations, have: 0 })
  }
  if (receipt.status !== '0x1') throw new PaymentError('TX_FAILED', 'the payment transaction failed on chain (it was reverted): no tokens moved')

  const transfers = receipt.logs.filter((l) => l.topics.length === 3 && l.topics[0]?.toLowerCase() === TRANSFER_TOPIC && l.removed !== true)
  if (transfers.length === 0) throw new PaymentError('NO_TRANSFER', 'this transaction transfers no tokens')
  const ofToken = transfers.filter((l) => l.address.toLowerCase() === expect.token)
  if (ofToken.length === 0) throw new PaymentError('WRONG_TOKEN', `this transaction transfers another token, not the payment token ${expect.token}`)
  const toTreasury = ofToken.filter((l) => topicAddress(l.topics[2]) === expect.treasury)
  if (toTreasury.length === 0) throw new PaymentError('WRONG_RECIPIENT', `the tokens went to another address, not to the treasury ${expect.treasury}`)
  const fromWallet = toTreasury.filter((l) => topicAddress(l.topics[1]) === expect.from)
  if (fromWallet.length === 0) throw new PaymentError('WRONG_SENDER', `the tokens came from another wallet, not from ${expect.from} (the one signed in)`)
  const unused = fromWallet.filter((l) => !(expect.isUsed?.(Number(l.logIndex)) ?? false))
  if (unused.length === 0) throw new PaymentError('ALREADY_USED', 'this payment was already used for another invoice')
  const enough = unused.find((l) => BigInt(l.data) >= expect.minAmount)
  if (enough === undefined) {
    // biome-ignore lint/complexity/useMathMinMax: BigInt values, which Math.max refuses
    const largest = unused.map((l) => BigInt(l.data)).reduce((a, b) => (a > b ? a : b))
    throw new PaymentError(
      'TOO_SMALL',
      `the payment is too small: ${usdOf(largest, expect.decimals)} arrived, ${usdOf(expect.minAmount, expect.decimals)} are due`,
      {
        paid: usdOf(largest, expect.decimals),
        due: usdOf(expect.minAmount, expect.decimals),
      },
    )
  }

  const blockNumber = Number(BigInt(receipt.blockNumber))
  const head = Number(BigInt(await ask<string>(rpc, 'eth_blockNumber', [])))
  const have = Math.max(0, head - blockNumber + 1)
  if (have < expect.confirmations) {
    throw new PaymentError('UNCONFIRMED', `the payment is on chain and waits for confirmations: ${have} of ${expect.confirmations}`, {
      have,
      need: expect.confirmations,
    })
  }
  const block = await ask<{ hash: string; timestamp: string } | null>(rpc, 'eth_getBlockByNumber', [receipt.blockNumber, false])
  if (block === null || block.hash.toLowerCase() !== receipt.blockHash.toLowerCase()) {
    throw new PaymentError(
      'REORGED',
      'the block of this payment was replaced by a chain reorganisation: the payment may have moved or vanished; check your wallet and try again',
    )
  }
  return {
    txHash,
    logIndex: Number(enough.logIndex),
    amount: BigInt(enough.data),
    blockNumber,
    blockHash: receipt.blockHash.toLowerCase(),
    minedAt: Number(BigInt(block.timestamp)) * 1000,
  }
}

/** The address in an indexed address topic (the last 20 of 32 bytes), lower case. */
function topicAddress(topic: string | undefined): string {
  return `0x${(topic ?? '').slice(-40).toLowerCase()}`
}

async function ask<T>(rpc: ChainRpc, method: string, params: unknown[]): Promise<T> {
  try {
    return await rpc.request<T>(method, params)
  } catch (cause) {
    if (cause instanceof ChainRpcError) throw new PaymentError('CHAIN_UNAVAILABLE', `the node refused ${method}: ${cause.message}`, {}, { cause })
    throw new PaymentError('CHAIN_UNAVAILABLE', `the ${rpc.network} node did not answer; try again in a moment`, {}, { cause })
  }
}
