import { getContractAddress } from 'viem'
import { checkFailure } from './check-failure.js'
import { quantity } from './hex-fields.js'
import type { Hex, RpcHeader, RpcReceipt, RpcTransaction } from './rpc-shapes.js'

/**
 * The fields of transactions, receipts and logs that say where they sit (block hash and number,
 * index, the transaction a receipt is of, a log's index) are in no root: a node could move a
 * checked receipt to another transaction, or renumber logs, and every root would still match.
 * These checks tie them to the trusted header and to each other.
 */

const sameHex = (a: unknown, b: string): boolean => typeof a === 'string' && a.toLowerCase() === b.toLowerCase()

/**
 * A field that must equal what the block says: hex compared without case, numbers by value, and
 * null (a receipt's `to` of a creation, its `contractAddress` of a call) as itself.
 */
function place(check: 'TRANSACTION_PLACE' | 'RECEIPT_PLACE', subject: string, field: string, got: unknown, expected: string | bigint | null): void {
  if (got === undefined) return // a node that leaves a field out claims nothing with it
  const same =
    expected === null || got === null
      ? got === expected
      : typeof expected === 'bigint'
        ? quantity(got, check, `${subject} ${field}`) === expected
        : sameHex(got, expected)
  if (!same) throw checkFailure('PLACE_DIFFERS', { check, field: `${subject} ${field}`, expected, got })
}

const num = (hex: Hex): bigint => BigInt(hex)

/**
 * Check that each transaction object of a block says it is in that block, at its index.
 * @throws VerificationError TRANSACTION_PLACE
 * @example verifyTransactionPlaces(block, block.transactions)
 */
export function verifyTransactionPlaces(header: RpcHeader, transactions: readonly RpcTransaction[]): void {
  transactions.forEach((tx, i) => {
    const subject = `transaction ${i}`
    place('TRANSACTION_PLACE', subject, 'blockHash', tx.blockHash, header.hash)
    place('TRANSACTION_PLACE', subject, 'blockNumber', tx.blockNumber, num(header.number))
    place('TRANSACTION_PLACE', subject, 'transactionIndex', tx.transactionIndex, BigInt(i))
    place('TRANSACTION_PLACE', subject, 'gasPrice', tx.gasPrice, effectiveGasPrice(header, tx))
  })
}

/** What a mined transaction paid per gas: its gasPrice, or (EIP-1559 on) the base fee plus its tip, capped by its fee cap. */
function effectiveGasPrice(header: RpcHeader, tx: RpcTransaction): bigint {
  const at = `transaction ${tx.hash}`
  if (tx.maxFeePerGas === undefined) return quantity(tx.gasPrice, 'TRANSACTION_PLACE', `${at} gasPrice`)
  const cap = quantity(tx.maxFeePerGas, 'TRANSACTION_PLACE', `${at} maxFeePerGas`)
  const tip = quantity(tx.maxPriorityFeePerGas, 'TRANSACTION_PLACE', `${at} maxPriorityFeePerGas`)
  const baseFee = quantity(header.baseFeePerGas, 'TRANSACTION_PLACE', 'baseFeePerGas')
  // biome-ignore lint/complexity/useMathMinMax: bigints, which Math.min does not take
  return baseFee + tip < cap ? baseFee + tip : cap
}

/**
 * Check that a block's receipts (in order) say they are that block's, of its transactions in order,
 * with gasUsed the step of cumulativeGasUsed, and that their logs carry the same places and the
 * block's consecutive log indexes. Given the block's (checked) transactions, also each receipt's
 * transactionHash, from, to, contractAddress and effectiveGasPrice against its transaction's.
 * @throws VerificationError RECEIPT_PLACE
 * @example verifyReceiptPlaces(header, receipts, block.transactions)
 */
export function verifyReceiptPlaces(header: RpcHeader, receipts: readonly RpcReceipt[], transactions?: readonly RpcTransaction[]): void {
  if (transactions && transactions.length !== receipts.length) {
    throw checkFailure('RECEIPTS_NOT_ONE_PER_TRANSACTION', { block: header.number, transactions: transactions.length, receipts: receipts.length })
  }
  let previousCumulative = 0n
  let logIndex = 0
  receipts.forEach((receipt, i) => {
    const subject = `receipt ${i}`
    const index = BigInt(i)
    const tx = transactions?.[i]
    place('RECEIPT_PLACE', subject, 'blockHash', receipt.blockHash, header.hash)
    place('RECEIPT_PLACE', subject, 'blockNumber', receipt.blockNumber, num(header.number))
    place('RECEIPT_PLACE', subject, 'transactionIndex', receipt.transactionIndex, index)
    if (tx) ofTransaction(receipt, tx, subject)
    const cumulative = quantity(receipt.cumulativeGasUsed, 'RECEIPT_PLACE', `${subject} cumulativeGasUsed`)
    place('RECEIPT_PLACE', subject, 'gasUsed', receipt.gasUsed, cumulative - previousCumulative)
    previousCumulative = cumulative
    for (const [j, log] of (receipt.logs ?? []).entries()) {
      const at = `${subject} log ${j}`
      place('RECEIPT_PLACE', at, 'blockHash', log.blockHash, header.hash)
      place('RECEIPT_PLACE', at, 'blockNumber', log.blockNumber, num(header.number))
      place('RECEIPT_PLACE', at, 'transactionIndex', log.transactionIndex, index)
      if (receipt.transactionHash) place('RECEIPT_PLACE', at, 'transactionHash', log.transactionHash, receipt.transactionHash)
      place('RECEIPT_PLACE', at, 'logIndex', log.logIndex, BigInt(logIndex++))
      if (log.removed === true) throw checkFailure('LOG_REMOVED', { log: at })
    }
  })
}

/** The receipt fields that repeat its transaction's (checked by hash and signature). */
function ofTransaction(receipt: RpcReceipt, tx: RpcTransaction, subject: string): void {
  place('RECEIPT_PLACE', subject, 'transactionHash', receipt.transactionHash, tx.hash)
  if (tx.from) place('RECEIPT_PLACE', subject, 'from', receipt.from, tx.from)
  place('RECEIPT_PLACE', subject, 'to', receipt.to, tx.to ?? null)
  if (tx.gasPrice)
    place('RECEIPT_PLACE', subject, 'effectiveGasPrice', receipt.effectiveGasPrice, quantity(tx.gasPrice, 'RECEIPT_PLACE', `${subject} gasPrice`))
  if (tx.to) place('RECEIPT_PLACE', subject, 'contractAddress', receipt.contractAddress, null)
  else if (tx.from) {
    const created = getContractAddress({ from: tx.from, nonce: quantity(tx.nonce, 'RECEIPT_PLACE', `${subject} nonce`) })
    place('RECEIPT_PLACE', subject, 'contractAddress', receipt.contractAddress, created)
  }
}
