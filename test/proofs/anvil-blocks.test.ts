import t from 'tap'
import { bytesToHex, type Hex } from 'viem'
import { verifyReceiptsRoot, verifyTransactionsRoot, verifyWithdrawalsRoot } from '../../src/proofs/block-body.js'
import { verifyReceiptPlaces, verifyTransactionPlaces } from '../../src/proofs/block-places.js'
import { FORK_FIELDS, headerFork, verifyHeader } from '../../src/proofs/header.js'
import { bloomMayMatch, logsBloom } from '../../src/proofs/log-bloom.js'
import type { RpcBlock, RpcReceipt, RpcTransaction } from '../../src/proofs/rpc-shapes.js'
import { verifyTransaction, verifyTransactionSender } from '../../src/proofs/transaction-encoding.js'
import { busyAnvil } from '../helpers/busy-chain.js'
import { altered } from './altered.js'

// Every block of a real anvil chain passes every block check, and every alteration of a header,
// transaction or receipt field, or of a list, is refused by the check that covers it.

const { busy, call } = await busyAnvil(t)

const blocks: { block: Omit<RpcBlock, 'transactions'> & { transactions: RpcTransaction[] }; receipts: RpcReceipt[] }[] = []
for (let n = 0; n <= busy.head; n++) {
  const tag = `0x${n.toString(16)}`
  blocks.push({ block: await call('eth_getBlockByNumber', [tag, true]), receipts: await call('eth_getBlockReceipts', [tag]) })
}
const busiest = blocks.reduce((a, b) => (b.block.transactions.length > a.block.transactions.length ? b : a))

t.test('every block of the chain passes every check', async (t) => {
  const types = new Set<string>()
  for (const { block, receipts } of blocks) {
    const at = `block ${Number(block.number)}`
    t.equal(verifyHeader(block), block.hash, `${at}: its header hashes to its hash`)
    t.equal(headerFork(block), 'prague', `${at}: anvil's blocks carry every field up to requestsHash`)
    if (block.transactions.some((tx) => tx.type === '0x3')) {
      // anvil 1.7.1 commits a block's blob transaction in its network form (with the blobs,
      // commitments and proofs: the raw transaction below), where the consensus rules commit the
      // transaction alone. The check keeps to the rules; this pins anvil's departure from them.
      await t.rejects(verifyTransactionsRoot(block, block.transactions), { code: 'TRANSACTIONS_ROOT' }, `${at}: anvil's root over a blob sidecar is refused`)
    } else await verifyTransactionsRoot(block, block.transactions)
    for (const tx of block.transactions) {
      types.add(tx.type ?? '0x0')
      await verifyTransactionSender(tx, verifyTransaction(tx))
    }
    // The same root from the raw encodings the node keeps.
    const raw: Hex[] = []
    for (let i = 0; i < block.transactions.length; i++)
      raw.push(await call('eth_getRawTransactionByBlockNumberAndIndex', [block.number, `0x${i.toString(16)}`]))
    await verifyTransactionsRoot(block, raw)
    verifyTransactionPlaces(block, block.transactions)
    await verifyWithdrawalsRoot(block, block.withdrawals ?? [])
    await verifyReceiptsRoot(block, receipts)
    verifyReceiptPlaces(block, receipts, block.transactions)
    // Our bloom is the node's: each receipt's, their OR the header's, and every log matches its block.
    const union = new Uint8Array(256)
    for (const receipt of receipts) {
      const bloom = logsBloom(receipt.logs)
      t.equal(bytesToHex(bloom), receipt.logsBloom, `${at}: receipt ${receipt.transactionIndex}'s bloom`)
      for (const [i, byte] of bloom.entries()) union[i]! |= byte
      for (const log of receipt.logs)
        t.ok(bloomMayMatch(block.logsBloom, { address: log.address, topics: log.topics }), `${at}: a log matches its block's bloom`)
    }
    t.equal(bytesToHex(union), block.logsBloom, `${at}: the header's bloom is its receipts'`)
    t.pass(`${at}: ${block.transactions.length} transactions, ${receipts.length} receipts, roots and places checked`)
  }
  t.same([...types].sort(), ['0x0', '0x1', '0x2', '0x3', '0x4'], 'the chain has every transaction type')
  t.ok(busiest.block.transactions.length >= 4, 'a block of several transactions (tries of more than one leaf)')
})

t.test('a header with any one field altered is refused', async (t) => {
  const { block } = busiest
  const fields: string[] = [
    'parentHash',
    'sha3Uncles',
    'miner',
    'stateRoot',
    'transactionsRoot',
    'receiptsRoot',
    'logsBloom',
    'difficulty',
    'number',
    'gasLimit',
  ]
  fields.push('gasUsed', 'timestamp', 'extraData', 'mixHash', 'nonce', ...FORK_FIELDS.map((f) => f.field))
  for (const field of fields) t.throws(() => verifyHeader(altered(block, field as keyof RpcBlock)), { code: 'HEADER_HASH' }, `${field} altered`)
  t.throws(() => verifyHeader({ ...block, hash: altered(block, 'hash').hash }), { code: 'HEADER_HASH' }, 'another hash claimed')
  t.throws(() => verifyHeader({ ...block, withdrawalsRoot: undefined }), { code: 'HEADER_FIELDS' }, 'a fork field missing before later ones')
  t.throws(() => verifyHeader({ ...block, requestsHash: undefined }), { code: 'HEADER_HASH' }, 'the last fork field left out')
})

t.test('a transaction with any one field altered is refused', async (t) => {
  for (const { block } of blocks) {
    for (const tx of block.transactions) {
      const encoded = [
        'nonce',
        'gas',
        'to',
        'value',
        'input',
        'r',
        's',
        'hash',
        'chainId',
        'gasPrice',
        'maxFeePerGas',
        'maxPriorityFeePerGas',
        'maxFeePerBlobGas',
      ]
      for (const field of [...encoded, 'v', 'yParity']) {
        if ((tx as any)[field] === undefined || (tx.type !== '0x0' && tx.type !== '0x1' && field === 'gasPrice')) continue
        t.throws(
          () => verifyTransaction(altered(tx, field as keyof RpcTransaction)),
          { code: /^TRANSACTION_(HASH|ENCODING)$/ },
          `type ${tx.type} ${field} altered`,
        )
      }
      for (const list of ['accessList', 'blobVersionedHashes', 'authorizationList'] as const) {
        if (!tx[list]?.length) continue
        t.throws(() => verifyTransaction({ ...tx, [list]: [] }), { code: /^TRANSACTION_(HASH|ENCODING)$/ }, `type ${tx.type} ${list} emptied`)
      }
      if (tx.authorizationList?.length) {
        const authorizationList = [{ ...tx.authorizationList[0]!, address: altered(tx.authorizationList[0]!, 'address').address }]
        t.throws(() => verifyTransaction({ ...tx, authorizationList }), { code: 'TRANSACTION_HASH' }, 'an authorization altered')
      }
      await t.rejects(
        verifyTransactionSender({ ...tx, from: busy.absent }, verifyTransaction(tx)),
        { code: 'TRANSACTION_SENDER' },
        `type ${tx.type} from altered`,
      )
    }
    if (block.transactions.length > 0) {
      t.throws(() => verifyTransactionPlaces(block, [altered(block.transactions[0]!, 'blockNumber')]), { code: 'TRANSACTION_PLACE' })
      if (block.transactions[0]!.type === '0x2')
        t.throws(() => verifyTransactionPlaces(block, [altered(block.transactions[0]!, 'gasPrice')]), { code: 'TRANSACTION_PLACE' })
    }
  }
  const { block } = busiest
  const txs = block.transactions
  await t.rejects(verifyTransactionsRoot(block, txs.slice(1)), { code: 'TRANSACTIONS_ROOT' }, 'a transaction left out')
  await t.rejects(verifyTransactionsRoot(block, [txs[1]!, txs[0]!, ...txs.slice(2)]), { code: 'TRANSACTIONS_ROOT' }, 'two transactions swapped')
  await t.rejects(
    verifyTransactionsRoot(block, [...txs, blocks[1]!.block.transactions[0]!]),
    { code: 'TRANSACTIONS_ROOT' },
    "another block's transaction added",
  )
})

t.test('receipts with a status, a log or a place altered are refused', async (t) => {
  const { block, receipts } = busiest
  const withLogs = receipts.findIndex((r) => r.logs.length > 0)
  t.ok(withLogs >= 0, 'the block has a receipt with logs')
  const change = (i: number, edit: (r: RpcReceipt) => RpcReceipt) => receipts.map((r, j) => (j === i ? edit(structuredClone(r)) : r))
  const rooted: [string, RpcReceipt[]][] = [
    ['a status flipped', change(0, (r) => ({ ...r, status: r.status === '0x1' ? '0x0' : '0x1' }))],
    ['cumulativeGasUsed altered', change(0, (r) => altered(r, 'cumulativeGasUsed'))],
    ['a bloom altered', change(withLogs, (r) => altered(r, 'logsBloom'))],
    ['a log dropped', change(withLogs, (r) => ({ ...r, logs: r.logs.slice(1) }))],
    ['a log added', change(withLogs, (r) => ({ ...r, logs: [...r.logs, r.logs[0]!] }))],
    ["a log's data altered", change(withLogs, (r) => ({ ...r, logs: [altered(r.logs[0]!, 'data'), ...r.logs.slice(1)] }))],
    ["a log's topic altered", change(withLogs, (r) => ({ ...r, logs: [{ ...r.logs[0]!, topics: [altered(r.logs[0]!.topics, 0)[0]!] }] }))],
    ["a log's address altered", change(withLogs, (r) => ({ ...r, logs: [altered(r.logs[0]!, 'address'), ...r.logs.slice(1)] }))],
    ['the type altered', change(0, (r) => ({ ...r, type: r.type === '0x2' ? '0x1' : '0x2' }))],
    ['a receipt left out', receipts.slice(1)],
    ['two receipts swapped', [receipts[1]!, receipts[0]!, ...receipts.slice(2)]],
  ]
  for (const [what, list] of rooted) await t.rejects(verifyReceiptsRoot(block, list), { code: 'RECEIPTS_ROOT' }, what)
  const placed: [string, RpcReceipt[]][] = [
    ['a transactionHash of another', change(0, (r) => ({ ...r, transactionHash: receipts[1]!.transactionHash }))],
    ['gasUsed altered', change(0, (r) => altered(r, 'gasUsed'))],
    ['from altered', change(0, (r) => ({ ...r, from: busy.absent }))],
    ['contractAddress added', change(0, (r) => ({ ...r, contractAddress: busy.absent }))],
    ['effectiveGasPrice altered', change(0, (r) => altered(r, 'effectiveGasPrice'))],
    ['a logIndex altered', change(withLogs, (r) => ({ ...r, logs: [altered(r.logs[0]!, 'logIndex'), ...r.logs.slice(1)] }))],
    ["a log's blockHash altered", change(withLogs, (r) => ({ ...r, logs: [altered(r.logs[0]!, 'blockHash'), ...r.logs.slice(1)] }))],
  ]
  for (const [what, list] of placed) t.throws(() => verifyReceiptPlaces(block, list, block.transactions), { code: 'RECEIPT_PLACE' }, what)
})

t.test('withdrawals: an empty list only matches an empty root', async (t) => {
  const { block } = busiest
  const one = { index: '0x1', validatorIndex: '0x2', address: busy.eoa, amount: '0x3' } as const
  await t.rejects(verifyWithdrawalsRoot(block, [one]), { code: 'WITHDRAWALS_ROOT' }, 'a withdrawal added')
})
