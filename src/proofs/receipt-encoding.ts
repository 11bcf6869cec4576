import { RLP } from '@ethereumjs/rlp'
import { concatBytes } from 'viem'
import { checkFailure } from './check-failure.js'
import { data, quantity } from './hex-fields.js'
import type { RpcReceipt } from './rpc-shapes.js'

/**
 * A receipt's consensus encoding, what receiptsRoot commits to: `rlp([status, cumulativeGasUsed,
 * logsBloom, logs])`, each log `[address, topics, data]`, behind its transaction's type byte when
 * the type is not legacy (EIP-2718). Before Byzantium the first field is the post-state root (EIP-658
 * made it a status). viem has no receipt encoder and @ethereumjs/vm's (`encodeReceipt`) comes with
 * the whole VM, so the list is written here over @ethereumjs/rlp; every other field of a receipt
 * answer (gasUsed, from, to, contractAddress, effectiveGasPrice, the log positions) is not in it:
 * receipt-checks.ts checks those it can against the block.
 * @throws VerificationError RECEIPTS_ROOT when a field is malformed
 * @example keccak256(encodeReceipt(receipt)) // a leaf of the receipts trie
 */
export function encodeReceipt(receipt: RpcReceipt): Uint8Array {
  const at = `receipt ${receipt.transactionHash ?? receipt.transactionIndex}`
  const first =
    receipt.status !== undefined && receipt.status !== null
      ? quantity(receipt.status, 'RECEIPTS_ROOT', `${at} status`)
      : data(receipt.root, 'RECEIPTS_ROOT', `${at} root (pre-Byzantium, no status)`, 32)
  const logs = (receipt.logs ?? []).map((log, i) => [
    data(log.address, 'RECEIPTS_ROOT', `${at} log ${i} address`, 20),
    log.topics.map((topic, j) => data(topic, 'RECEIPTS_ROOT', `${at} log ${i} topic ${j}`, 32)),
    data(log.data, 'RECEIPTS_ROOT', `${at} log ${i} data`),
  ])
  const body = RLP.encode([
    first,
    quantity(receipt.cumulativeGasUsed, 'RECEIPTS_ROOT', `${at} cumulativeGasUsed`),
    data(receipt.logsBloom, 'RECEIPTS_ROOT', `${at} logsBloom`, 256),
    logs,
  ])
  const type = receipt.type === undefined ? 0n : quantity(receipt.type, 'RECEIPTS_ROOT', `${at} type`)
  if (type === 0n) return body
  if (type > 0x7fn) throw checkFailure('RECEIPT_TYPE_TOO_HIGH', { field: `${at} type`, type: receipt.type! })
  return concatBytes([Uint8Array.of(Number(type)), body])
}
