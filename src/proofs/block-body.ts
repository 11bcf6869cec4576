import { RLP } from '@ethereumjs/rlp'
import { createWithdrawal } from '@ethereumjs/util'
import { checkFailure } from './check-failure.js'
import { data } from './hex-fields.js'
import { orderedTrieRoot } from './ordered-trie.js'
import { encodeReceipt } from './receipt-encoding.js'
import type { Hex, RpcHeader, RpcReceipt, RpcTransaction, RpcWithdrawal } from './rpc-shapes.js'
import { verifyTransaction } from './transaction-encoding.js'

/**
 * A block's lists checked against the roots of its (trusted, hash-checked) header: each list is
 * rebuilt into its trie and the root compared. A list with an item altered, left out, added or
 * moved gives another root.
 */

function compareRoot(check: 'TRANSACTIONS_ROOT' | 'WITHDRAWALS_ROOT' | 'RECEIPTS_ROOT', header: RpcHeader, claimed: Hex | undefined, computed: Hex): void {
  const expected = String(claimed).toLowerCase()
  if (computed !== expected) throw checkFailure('ROOT_FROM_ANSWER', { check, block: header.number, root: expected, computed })
}

/**
 * Check a block's transactions against its transactionsRoot: full objects (each one's hash checked
 * against its fields first) or raw encodings (as `eth_getRawTransactionByBlockNumberAndIndex` or a
 * raw block give them). Transaction hashes alone cannot rebuild the root: ask for full objects.
 * @throws VerificationError TRANSACTIONS_ROOT, TRANSACTION_HASH or TRANSACTION_ENCODING
 * @example await verifyTransactionsRoot(header, (await node.rpc('eth_getBlockByNumber', [n, true])).transactions)
 */
export async function verifyTransactionsRoot(header: RpcHeader, transactions: readonly (RpcTransaction | Hex)[]): Promise<void> {
  const encodings = transactions.map((tx, i) => (typeof tx === 'string' ? data(tx, 'TRANSACTIONS_ROOT', `raw transaction ${i}`) : verifyTransaction(tx)))
  compareRoot('TRANSACTIONS_ROOT', header, header.transactionsRoot, await orderedTrieRoot(encodings))
}

/**
 * Check a block's withdrawals (Shanghai on) against its withdrawalsRoot. Each withdrawal's encoding
 * is @ethereumjs/util's `Withdrawal.raw()`.
 * @throws VerificationError WITHDRAWALS_ROOT (also when the header has no withdrawalsRoot and the answer has withdrawals)
 * @example await verifyWithdrawalsRoot(block, block.withdrawals ?? [])
 */
export async function verifyWithdrawalsRoot(header: RpcHeader, withdrawals: readonly RpcWithdrawal[]): Promise<void> {
  if (header.withdrawalsRoot === undefined) {
    if (withdrawals.length > 0) throw checkFailure('WITHDRAWALS_WITHOUT_ROOT', { block: header.number, withdrawals: withdrawals.length })
    return
  }
  const encodings = withdrawals.map((w, i) => {
    try {
      const raw = createWithdrawal({ index: w.index, validatorIndex: w.validatorIndex, address: w.address, amount: w.amount }).raw()
      return RLP.encode(raw)
    } catch (cause) {
      throw checkFailure('WITHDRAWAL_FIELDS', { index: i, withdrawal: w }, { cause })
    }
  })
  compareRoot('WITHDRAWALS_ROOT', header, header.withdrawalsRoot, await orderedTrieRoot(encodings))
}

/**
 * Check a block's receipts (`eth_getBlockReceipts`, in transaction order) against its receiptsRoot.
 * What the root covers: status (or pre-Byzantium root), cumulativeGasUsed, logsBloom, the logs'
 * address, topics and data, and the type. receipt-checks.ts covers the fields beside them.
 * @throws VerificationError RECEIPTS_ROOT
 * @example await verifyReceiptsRoot(header, await node.rpc('eth_getBlockReceipts', [header.hash]))
 */
export async function verifyReceiptsRoot(header: RpcHeader, receipts: readonly RpcReceipt[]): Promise<void> {
  compareRoot('RECEIPTS_ROOT', header, header.receiptsRoot, await orderedTrieRoot(receipts.map(encodeReceipt)))
}
