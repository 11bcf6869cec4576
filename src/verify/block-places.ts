import { VerificationError } from './errors.js'
import { quantity } from './hex-fields.js'
import type { Hex, RpcHeader, RpcReceipt, RpcTransaction } from './rpc-shapes.js'

/**
 * The fields of transactions, receipts and logs that say where they sit (block hash and number,
 * index, the transaction a receipt is of, a log's index) are in no root: a node could move a
 * checked receipt to another transaction, or renumber logs, and every root would still match.
 * These checks tie them to the trusted header and to each other.
 */

const sameHex = (a: unknown, b: string): boolean => typeof a === 'string' && a.toLowerCase() === b.toLowerCase()

function place(check: 'TRANSACTION_PLACE' | 'RECEIPT_PLACE', subject: string, field: string, got: unknown, expected: string): void {
  if (got === undefined || got === null) return // a node that leaves a field out claims nothing with it
  const same = field.endsWith('Hash') ? sameHex(got, expected) : quantity(got, check, `${subject} ${field}`) === BigInt(expected)
  if (!same) throw new VerificationError(check, `${subject} ${field}`, expected, String(got))
}

/**
 * Check that each transaction object of a block says it is in that block, at its index.
 * @throws VerificationError TRANSACTION_PLACE
 * @example verifyTransactionPlaces(block, block.transactions)
 */
export function verifyTransactionPlaces(header: RpcHeader, transactions: readonly RpcTransaction[]): void {
  transactions.forEach((tx, i) => {
    const subject = `transaction ${i}`
    place('TRANSACTION_PLACE', subject, 'blockHash', tx.blockHash, header.hash)
    place('TRANSACTION_PLACE', subject, 'blockNumber', tx.blockNumber, header.number)
    place('TRANSACTION_PLACE', subject, 'transactionIndex', tx.transactionIndex, `0x${i.toString(16)}`)
  })
}

/**
 * Check that a block's receipts (in order) say they are that block's, of its transactions in order,
 * with gasUsed the step of cumulativeGasUsed, and that their logs carry the same places and the
 * block's consecutive log indexes.
 * @param transactionHashes the block's transaction hashes, checked (when given) one for one
 * @throws VerificationError RECEIPT_PLACE
 * @example verifyReceiptPlaces(header, receipts, block.transactions.map((tx) => tx.hash))
 */
export function verifyReceiptPlaces(header: RpcHeader, receipts: readonly RpcReceipt[], transactionHashes?: readonly Hex[]): void {
  if (transactionHashes && transactionHashes.length !== receipts.length) {
    throw new VerificationError('RECEIPT_PLACE', `block ${header.number} receipts`, `${transactionHashes.length} (one per transaction)`, `${receipts.length}`)
  }
  let previousCumulative = 0n
  let logIndex = 0
  receipts.forEach((receipt, i) => {
    const subject = `receipt ${i}`
    const index = `0x${i.toString(16)}`
    const txHash = transactionHashes?.[i]
    place('RECEIPT_PLACE', subject, 'blockHash', receipt.blockHash, header.hash)
    place('RECEIPT_PLACE', subject, 'blockNumber', receipt.blockNumber, header.number)
    place('RECEIPT_PLACE', subject, 'transactionIndex', receipt.transactionIndex, index)
    if (txHash) place('RECEIPT_PLACE', subject, 'transactionHash', receipt.transactionHash, txHash)
    const cumulative = quantity(receipt.cumulativeGasUsed, 'RECEIPT_PLACE', `${subject} cumulativeGasUsed`)
    place('RECEIPT_PLACE', subject, 'gasUsed', receipt.gasUsed, String(cumulative - previousCumulative))
    previousCumulative = cumulative
    for (const [j, log] of (receipt.logs ?? []).entries()) {
      const at = `${subject} log ${j}`
      place('RECEIPT_PLACE', at, 'blockHash', log.blockHash, header.hash)
      place('RECEIPT_PLACE', at, 'blockNumber', log.blockNumber, header.number)
      place('RECEIPT_PLACE', at, 'transactionIndex', log.transactionIndex, index)
      if (receipt.transactionHash) place('RECEIPT_PLACE', at, 'transactionHash', log.transactionHash, receipt.transactionHash)
      place('RECEIPT_PLACE', at, 'logIndex', log.logIndex, `0x${(logIndex++).toString(16)}`)
      if (log.removed === true) throw new VerificationError('RECEIPT_PLACE', `${at} removed`, 'false (a log of a canonical block)', 'true')
    }
  })
}
