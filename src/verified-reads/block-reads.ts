import type { NodeKind } from '../core/node-kind.js'
import { Answer } from '../upstream/answer.js'
import { MethodServedByNoNode } from '../upstream/errors.js'
import type { PoolCallOptions, UpstreamPool } from '../upstream/pool.js'
import { verifyReceiptsRoot, verifyTransactionsRoot, verifyWithdrawalsRoot } from '../proofs/block-body.js'
import { verifyReceiptPlaces, verifyTransactionPlaces } from '../proofs/block-places.js'
import { REFUSED_BECAUSE } from '../errors/messages.js'
import { PASSED_OVER_BECAUSE } from '../errors/problem-words.js'
import { checkFailure } from '../proofs/check-failure.js'
import { verifyHeader } from '../proofs/header.js'
import type { Hex, RpcBlock, RpcReceipt, RpcTransaction } from '../proofs/rpc-shapes.js'
import { verifyTransaction, verifyTransactionSender } from '../proofs/transaction-encoding.js'
import { EMPTY_TRIE_ROOT } from '../proofs/trie-proof.js'
import { type BlockRef, blockRefOf } from './block-ref.js'
import { firstPassing } from './first-passing.js'
import { NodeErrorAnswer, PassOver } from './errors.js'
import { nodesLackOf } from './nodes-lack.js'
import type { TrustedHeader, TrustedHeaders } from './trusted-headers.js'
import { NodesLack } from './errors.js'

/** The block and receipt reads `verify: reads` proves (the state reads: state-reads.ts). */
const BLOCK_READS: ReadonlySet<string> = new Set([
  'eth_getBlockByNumber',
  'eth_getBlockByHash',
  'eth_getBlockReceipts',
  'eth_getTransactionReceipt',
  'eth_getTransactionByHash',
  'eth_getTransactionByBlockHashAndIndex',
  'eth_getTransactionByBlockNumberAndIndex',
])
const INDEX = /^0x(0|[1-9a-fA-F][0-9a-fA-F]{0,7})$/
const BLOCK_HASH = /^0x[0-9a-fA-F]{64}$/

/**
 * Receipts proven one by one (where no node serves eth_getBlockReceipts): at most this many
 * transactions a block, a node call each, RECEIPTS_AT_ONCE of them in flight. A verified read of a
 * block's receipts costs a node call per transaction there, and the bound keeps one read from
 * becoming thousands.
 */
const MAX_RECEIPTS_ONE_BY_ONE = 1_000
const RECEIPTS_AT_ONCE = 20

export function isVerifiedBlockRead(method: string): boolean {
  return BLOCK_READS.has(method)
}

/**
 * Blocks and receipts proven against a trusted header (docs/verified-answers.md):
 * - a block: its fields hash to the trusted hash; its transactions (asked as full objects, each
 *   one's hash checked against its fields) rebuild transactionsRoot and say they sit in it, its
 *   withdrawals withdrawalsRoot; answered with hashes where the client asked for hashes;
 * - a block's receipts: they rebuild receiptsRoot, their places (block, index, logs) are the block's,
 *   and what they repeat of the block's proven transactions at their index (hash, to, a call's null
 *   contract address, price) is the transactions';
 * - a transaction (by hash) or its receipt: the one at that transaction's index in its proven block,
 *   its sender recovered from its signature (and with it a creation's contract address).
 * What no root covers is not proven: the `from` of a block's transactions and receipts (a recovery
 * each is the dearest check: about 4 ms a transaction), so the node's word.
 * An absent block or receipt (`null`) is handed on: absence is not proven.
 */
export class VerifiedBlockReads {
  constructor(
    private readonly pool: UpstreamPool,
    readonly headers: TrustedHeaders,
  ) {}

  async call(kind: NodeKind, method: string, params: unknown, idJson: string, opts: PoolCallOptions): Promise<Answer> {
    const list = Array.isArray(params) ? params : []
    if (method === 'eth_getTransactionReceipt') return this.#receipt(kind, list[0], idJson, opts)
    if (method === 'eth_getTransactionByHash') return this.#transaction(kind, list[0], idJson, opts)
    const byHash = method === 'eth_getBlockByHash' || method === 'eth_getTransactionByBlockHashAndIndex'
    // eth_getBlockReceipts takes a block hash as a plain string too (geth's BlockNumberOrHash):
    // read as a number it was no block at all and went to a node unchecked.
    const plainHash = method === 'eth_getBlockReceipts' && typeof list[0] === 'string' && BLOCK_HASH.test(list[0])
    const ref = byHash || plainHash ? blockRefOf({ blockHash: list[0] }) : blockRefOf(list[0])
    if (ref === undefined || ('tag' in ref && ref.tag === 'pending')) return this.#asIs(kind, method, params, idJson, opts)
    const header = await this.headers.at(ref)
    if (header === null) return answer(idJson, 'null', 'gateway', kind)
    if (method === 'eth_getBlockReceipts') {
      const { text, node } = await this.receipts(kind, header, opts, {})
      return verified(answer(idJson, text, node, kind), header)
    }
    const { block, node } = await this.#block(kind, header, opts)
    if (method !== 'eth_getBlockByNumber' && method !== 'eth_getBlockByHash') {
      // A transaction by its block and index: the verified block's, or null past its last (as nodes answer).
      if (typeof list[1] !== 'string' || !INDEX.test(list[1])) return this.#asIs(kind, method, params, idJson, opts)
      const tx = (block.transactions as RpcTransaction[])[Number.parseInt(list[1], 16)]
      return verified(answer(idJson, tx === undefined ? 'null' : JSON.stringify(tx), node, kind), header)
    }
    const full = list[1] === true
    const out = full ? block : { ...block, transactions: (block.transactions as RpcTransaction[]).map((tx) => tx.hash) }
    return verified(answer(idJson, JSON.stringify(out), node, kind), header)
  }

  /**
   * The block at the trusted header with full transactions, checked against it; with `senderOf` (a
   * transaction's hash), that transaction's `from` also recovered from its signature, so a block
   * naming another sender fails this node (TRANSACTION_SENDER) and another is asked.
   */
  #block(kind: NodeKind, header: TrustedHeader, opts: PoolCallOptions, senderOf?: string): Promise<{ block: RpcBlock; node: string }> {
    const call = { kind, method: 'eth_getBlockByHash', params: [header.hash, true], minBlock: header.number, opts, notJson: 'HEADER_HASH' as const }
    return firstPassing(this.pool, call, async (reply) => {
      const block = resultOf<RpcBlock>(reply, 'HEADER_HASH', `block ${header.hash}`)
      const hash = verifyHeader(block)
      if (hash !== header.hash) throw checkFailure('BLOCK_NOT_THE_TRUSTED', { trusted: header.hash, hash })
      const transactions = block.transactions as RpcTransaction[]
      if (transactions.some((tx) => typeof tx !== 'object')) throw checkFailure('TRANSACTIONS_NOT_OBJECTS', {})
      await verifyTransactionsRoot(block, transactions)
      verifyTransactionPlaces(block, transactions)
      await verifyWithdrawalsRoot(block, block.withdrawals ?? [])
      const proven = senderOf === undefined ? undefined : transactions.find((tx) => sameHash(tx.hash, senderOf))
      if (proven !== undefined) await verifyTransactionSender(proven, verifyTransaction(proven))
      return { block, node: reply.node }
    })
  }

  /**
   * The receipts of the trusted header's block, checked against its receiptsRoot and their places;
   * with `ofTransactions`, also against the block's proven transactions at their index: the node's
   * text, the receipts and (then) the transactions. Without the transactions a receipt's
   * transactionHash is in no root, so a node could swap two receipts' hashes and a reverted
   * transaction's receipt would read as the other's success: every receipt answer here asks for
   * them. A verified eth_getLogs asks without them (a block call per candidate block more, and
   * anvil's blocks with a blob transaction fail their transactionsRoot): its logs'
   * transactionHash is then the node's word (docs/verified-answers.md, field by field).
   * A transaction's `from` is proven only for `senderOf` (recovered, see #block); the receipts'
   * `from` and `contractAddress` of the others are not held to a sender no check proved, or an
   * honest node's receipts would fail for a lie in another node's block.
   */
  async receipts(
    kind: NodeKind,
    header: TrustedHeader,
    opts: PoolCallOptions,
    ofTransactions?: { senderOf?: string },
  ): Promise<{ text: string; receipts: RpcReceipt[]; transactions?: RpcTransaction[]; node: string }> {
    const senderOf = ofTransactions?.senderOf
    // A block with no transactions (its root the empty trie's) needs no block call to say so.
    const transactions =
      ofTransactions === undefined
        ? undefined
        : header.header.transactionsRoot.toLowerCase() === EMPTY_TRIE_ROOT
          ? []
          : ((await this.#block(kind, header, opts, senderOf)).block.transactions as RpcTransaction[])
    const proven = transactions?.map((tx) => (senderOf !== undefined && sameHash(tx.hash, senderOf) ? tx : { ...tx, from: undefined }))
    const call = { kind, method: 'eth_getBlockReceipts', params: [header.hash], minBlock: header.number, opts, notJson: 'RECEIPTS_ROOT' as const }
    try {
      return await firstPassing(this.pool, call, async (reply) => {
        const receipts = resultOf<RpcReceipt[]>(reply, 'RECEIPTS_ROOT', `receipts of ${header.hash}`)
        if (!Array.isArray(receipts)) throw checkFailure('RECEIPTS_NOT_A_LIST', { block: header.hash, type: typeof receipts })
        await verifyReceiptsRoot(header.header, receipts)
        verifyReceiptPlaces({ ...header.header, hash: header.hash }, receipts, proven)
        return { text: JSON.stringify(receipts), receipts, transactions, node: reply.node }
      })
    } catch (err) {
      // Every node answered eth_getBlockReceipts with an error, or the pool knows none serves it
      // (Hardhat's EDR -32004, Ganache -32700): no lie, and the receipts can be proven another way.
      if (!(err instanceof NodeErrorAnswer) && !(err instanceof MethodServedByNoNode)) throw err
      // Named for /metrics: the node whose error was the last word, or every node of the kind.
      const lack = nodesLackOf(this.pool)
      if (err instanceof NodeErrorAnswer) lack.saw(err.answer.node, 'eth_getBlockReceipts')
      else for (const n of this.pool.nodes()) if (n.kind === kind) lack.saw(n.name, 'eth_getBlockReceipts')
    }
    const all =
      transactions ??
      (header.header.transactionsRoot.toLowerCase() === EMPTY_TRIE_ROOT ? [] : ((await this.#block(kind, header, opts)).block.transactions as RpcTransaction[]))
    return this.#oneByOne(kind, header, all, proven ?? all.map((tx) => ({ ...tx, from: undefined })), opts)
  }

  /**
   * A block's receipts where no node serves eth_getBlockReceipts: each transaction's
   * eth_getTransactionReceipt, all of one node, checked together against receiptsRoot and the
   * block's proven transactions as eth_getBlockReceipts' answer is. One node call a transaction
   * (at most MAX_RECEIPTS_ONE_BY_ONE, RECEIPTS_AT_ONCE at a time); past the bound, NodesLack.
   */
  async #oneByOne(
    kind: NodeKind,
    header: TrustedHeader,
    transactions: RpcTransaction[],
    checkedAgainst: RpcTransaction[],
    opts: PoolCallOptions,
  ): Promise<{ text: string; receipts: RpcReceipt[]; transactions: RpcTransaction[]; node: string }> {
    const place = { ...header.header, hash: header.hash }
    if (transactions.length === 0) {
      await verifyReceiptsRoot(header.header, [])
      return { text: '[]', receipts: [], transactions, node: 'gateway' }
    }
    if (transactions.length > MAX_RECEIPTS_ONE_BY_ONE) {
      throw new NodesLack(REFUSED_BECAUSE.NODES_LACK.BLOCK_RECEIPTS({ transactions: transactions.length, oneByOne: MAX_RECEIPTS_ONE_BY_ONE }))
    }
    const [first, ...rest] = transactions
    const call = { kind, method: 'eth_getTransactionReceipt', params: [first!.hash], minBlock: header.number, opts, notJson: 'RECEIPTS_ROOT' as const }
    return firstPassing(this.pool, call, async (reply) => {
      const answers = [reply]
      for (let i = 0; i < rest.length; i += RECEIPTS_AT_ONCE) {
        const part = rest.slice(i, i + RECEIPTS_AT_ONCE)
        const node = { ...opts, node: reply.node, checked: true }
        answers.push(
          ...(await Promise.all(part.map((tx) => this.pool.call({ ...node, kind, method: 'eth_getTransactionReceipt', params: [tx.hash], idJson: '0' })))),
        )
      }
      const receipts = answers.map((a, i) => {
        // An error or a receipt the node does not have yet contradicts no root: the node is passed over.
        if (a.isError) throw new PassOver(PASSED_OVER_BECAUSE.NODE_ERRED({ method: 'eth_getTransactionReceipt' }), a)
        const receipt = (JSON.parse(a.text) as { result?: RpcReceipt | null }).result
        if (receipt === null || receipt === undefined) throw new PassOver(PASSED_OVER_BECAUSE.NO_RECEIPT({ transaction: transactions[i]!.hash }))
        return receipt
      })
      await verifyReceiptsRoot(header.header, receipts)
      verifyReceiptPlaces(place, receipts, checkedAgainst)
      return { text: JSON.stringify(receipts), receipts, transactions, node: reply.node }
    })
  }

  /**
   * A transaction's receipt: one node's receipt names its block; that block (by hash, and canonical:
   * the header the nodes agree on at its number) has its receipts proven, and the transaction's is
   * the answer. A receipt that is not in its block's proven receipts fails RECEIPTS_ROOT.
   */
  async #receipt(kind: NodeKind, hash: unknown, idJson: string, opts: PoolCallOptions): Promise<Answer> {
    const first = await this.pool.call({ ...opts, kind, method: 'eth_getTransactionReceipt', params: [hash], idJson: '0', checked: true })
    if (first.isError) return first.withId(idJson)
    const claimed = (JSON.parse(first.text) as { result?: RpcReceipt | null }).result
    if (claimed === null || claimed === undefined) return first.withId(idJson)
    const ref: BlockRef | undefined = blockRefOf({ blockHash: claimed.blockHash, requireCanonical: true })
    if (ref === undefined) throw checkFailure('RECEIPT_BLOCK_HASH_INVALID', { blockHash: claimed.blockHash })
    const header = await this.headers.at(ref)
    if (header === null) throw checkFailure('BLOCK_NOT_CANONICAL', { of: 'receipt', blockHash: claimed.blockHash })
    // One recovery (not one per transaction of the block): this receipt's sender, and with it a creation's contract address, proven.
    const { receipts, transactions = [], node } = await this.receipts(kind, header, opts, { senderOf: String(hash) })
    // By the proven transactions, not the receipts' own hashes: the receipt at that transaction's index.
    const mine = receipts[transactions.findIndex((tx) => sameHash(tx.hash, String(hash)))]
    if (mine === undefined) throw checkFailure('NOT_IN_ITS_BLOCK', { of: 'receipt', hash, block: header.hash })
    return verified(answer(idJson, JSON.stringify(mine), node, kind), header)
  }

  /**
   * A transaction by hash: one node's names its block; that block (canonical, as for a receipt) is
   * verified with its transactions, and the answer is the transaction at its index there. A
   * transaction not yet in a block (blockHash null), or none, is handed on as the node gives it.
   */
  async #transaction(kind: NodeKind, hash: unknown, idJson: string, opts: PoolCallOptions): Promise<Answer> {
    const first = await this.pool.call({ ...opts, kind, method: 'eth_getTransactionByHash', params: [hash], idJson: '0', checked: true })
    if (first.isError) return first.withId(idJson)
    const claimed = (JSON.parse(first.text) as { result?: RpcTransaction | null }).result
    if (claimed === null || claimed === undefined || claimed.blockHash === null || claimed.blockHash === undefined) return first.withId(idJson)
    const ref = blockRefOf({ blockHash: claimed.blockHash, requireCanonical: true })
    const header = ref === undefined ? null : await this.headers.at(ref)
    if (header === null) throw checkFailure('BLOCK_NOT_CANONICAL', { of: 'transaction', blockHash: claimed.blockHash })
    const { block, node } = await this.#block(kind, header, opts, String(hash))
    const mine = (block.transactions as RpcTransaction[]).find((tx) => sameHash(tx.hash, String(hash)))
    if (mine === undefined) throw checkFailure('NOT_IN_ITS_BLOCK', { of: 'transaction', hash, block: header.hash })
    return verified(answer(idJson, JSON.stringify(mine), node, kind), header)
  }

  async #asIs(kind: NodeKind, method: string, params: unknown, idJson: string, opts: PoolCallOptions): Promise<Answer> {
    return this.pool.call({ ...opts, kind, method, params, idJson, checked: true })
  }
}

const sameHash = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase()

function resultOf<T>(reply: Answer, check: 'HEADER_HASH' | 'RECEIPTS_ROOT', subject: string): T {
  if (reply.isError) throw checkFailure('NO_RESULT', { check, subject, answered: 'an error' })
  const result = (JSON.parse(reply.text) as { result?: T | null }).result
  if (result === null || result === undefined) throw checkFailure('NO_RESULT', { check, subject, answered: 'null' })
  return result
}

function answer(idJson: string, resultJson: string, node: string, kind: NodeKind): Answer {
  return Answer.ofText(`{"jsonrpc":"2.0","id":${idJson},"result":${resultJson}}`, false, node, kind)
}

function verified(out: Answer, header: TrustedHeader): Answer {
  out.verifiedAt = header.hash as Hex
  return out
}
