/**
 * The methods the gateway serves, by namespace, and what the router needs to know of each: the
 * node kind it needs, where its block parameter is, and what it reads. The spec's table is the
 * common set; the read and send-signed methods of the execution-API spec (ethereum/execution-apis,
 * src/eth, src/debug, src/txpool, read at 033ca6e) are here too, because clients call them before
 * they ever send a transaction (eth_chainId, eth_feeHistory, eth_getProof…), and the read and
 * trace methods of geth, Nethermind, Besu, Erigon and reth that the plans sell (debug_traceCallMany,
 * eth_callMany, eth_getTransactionBySenderAndNonce…).
 *
 * Forward by allowlist: a method that is not here reaches a node only when the network's
 * `forwardMethods` allows it (src/rpc/forward-methods.ts), and never when it operates the node
 * (src/rpc/node-operating-methods.ts); anything else is refused with -32601 and why, without
 * asking a node.
 *
 * Each method has a cost in compute units, modelled on Alchemy's compute units (the table most
 * clients already know): what usage events count and what a plan's units per second limit
 * (docs/costs.md lists them; config `methodCosts` overrides them). The cost sits on the entry the
 * call path has already looked up, so that pricing a call is a field read, not a lookup.
 */

/** Where a method's block parameter is, for routing old state to archive nodes. */
export type BlockParam =
  /** params[i] is a block number, a tag, or an EIP-1898 object ({blockNumber} or {blockHash}). */
  | { at: number }
  /** params[0] is a filter object with fromBlock (and toBlock). */
  | { filter: true }

export interface MethodSpec {
  /** `archive`: only archive nodes serve it (trace_*); `any`: full nodes, archive ones for old state. */
  readonly needs: 'any' | 'archive'
  readonly block?: BlockParam
  /**
   * Filter methods hold state on one node: they are pinned to the node that created the filter;
   * `uninstall` uses it one last time and unpins it.
   */
  readonly filter?: 'create' | 'use' | 'uninstall'
  /**
   * Calls the upstream caller takes on a path of their own: `send` (a signed transaction, sent
   * to every node of the pool and shared between clients), `logs` (a block range split in parts).
   */
  readonly path?: 'send' | 'logs'
  /** Answered by the gateway itself, over WebSocket only (shared subscriptions: src/ws/). */
  readonly local?: 'subscribe' | 'unsubscribe'
  /**
   * Resource-intensive (the spec's heavy calls): a key may have only so many running at once
   * (limits.heavyCallsAtOnce, src/gateway/heavy-calls.ts).
   */
  readonly heavy?: boolean
  /** Compute units one call costs: counted in UsageRecorded.units and against a plan's units per second. */
  readonly cost: number
  /** What the call reads on the node (docs/costs.md shows it beside the cost). */
  readonly reads: Reads
  /**
   * Not in this table, forwarded because the network's `forwardMethods` allows it: as the client
   * sent it, never cached, shared in flight nor hedged, not tried on another node after a time-out
   * (what it does is unknown: it might send something), and heavy (one of its key's heavy calls at
   * once, the heavy time-out).
   */
  readonly unlisted?: true
}

/** What a method reads on the node, in a word or two. */
export type Reads =
  | 'head'
  | 'chain config'
  | 'node'
  | 'fees'
  | 'state'
  | 'execution'
  | 'block'
  | 'transaction'
  | 'receipts'
  | 'logs'
  | 'filter'
  | 'pool'
  | 'trace'
  | 'witness'
  | 'send'
  | 'subscription'
  | 'nothing'
  | 'unknown'

const any = (cost: number, reads: Reads, extra: Partial<MethodSpec> = {}): MethodSpec => ({ needs: 'any', cost, reads, ...extra })
const at = (i: number, cost: number, reads: Reads, extra: Partial<MethodSpec> = {}): MethodSpec => ({ needs: 'any', block: { at: i }, cost, reads, ...extra })
const archive = (cost: number, extra: Partial<MethodSpec> = {}): MethodSpec => ({ needs: 'archive', cost, reads: 'trace', ...extra })

export const METHODS: Readonly<Record<string, MethodSpec>> = Object.freeze({
  // eth: chain state and blocks
  eth_blockNumber: any(10, 'head'),
  eth_chainId: any(0, 'chain config'),
  eth_config: any(10, 'chain config'),
  eth_capabilities: any(10, 'node'),
  eth_syncing: any(0, 'head'),
  eth_protocolVersion: any(0, 'node'),
  eth_gasPrice: any(20, 'fees'),
  eth_maxPriorityFeePerGas: any(10, 'fees'),
  eth_baseFee: any(10, 'fees'),
  eth_blobBaseFee: any(10, 'fees'),
  eth_feeHistory: at(1, 10, 'fees'),
  eth_getBalance: at(1, 19, 'state'),
  eth_getCode: at(1, 19, 'state'),
  eth_getStorageAt: at(2, 17, 'state'),
  eth_getStorageValues: at(1, 50, 'state'),
  eth_getTransactionCount: at(1, 26, 'state'),
  eth_getProof: at(2, 21, 'state'),
  eth_getAccount: at(1, 26, 'state'),
  eth_getAccountInfo: at(1, 26, 'state'),
  eth_call: at(1, 26, 'execution'),
  eth_estimateGas: at(1, 87, 'execution'),
  eth_createAccessList: at(1, 26, 'execution'),
  eth_simulateV1: at(1, 87, 'execution'),
  eth_fillTransaction: any(87, 'execution'),
  eth_callMany: at(1, 150, 'execution', { heavy: true }),
  eth_getBlockByNumber: at(0, 16, 'block'),
  eth_getBlockByHash: any(21, 'block'),
  eth_getBlockReceipts: at(0, 500, 'receipts', { heavy: true }),
  eth_getBlockAccessList: at(0, 50, 'block'),
  eth_getBlockTransactionCountByNumber: at(0, 20, 'block'),
  eth_getBlockTransactionCountByHash: any(20, 'block'),
  eth_getUncleCountByBlockNumber: at(0, 20, 'block'),
  eth_getUncleCountByBlockHash: any(20, 'block'),
  eth_getUncleByBlockNumberAndIndex: at(0, 20, 'block'),
  eth_getUncleByBlockHashAndIndex: any(20, 'block'),
  eth_getHeaderByNumber: at(0, 16, 'block'),
  eth_getHeaderByHash: any(21, 'block'),
  // eth: transactions and logs
  eth_getTransactionByHash: any(17, 'transaction'),
  eth_getRawTransactionByHash: any(17, 'transaction'),
  eth_getTransactionByBlockNumberAndIndex: at(0, 15, 'transaction'),
  eth_getTransactionByBlockHashAndIndex: any(15, 'transaction'),
  eth_getRawTransactionByBlockNumberAndIndex: at(0, 15, 'transaction'),
  eth_getRawTransactionByBlockHashAndIndex: any(15, 'transaction'),
  eth_getTransactionBySenderAndNonce: any(40, 'transaction'),
  eth_getTransactionReceipt: any(15, 'receipts'),
  eth_sendRawTransaction: { needs: 'any', path: 'send', cost: 250, reads: 'send' },
  eth_getLogs: { needs: 'any', block: { filter: true }, heavy: true, path: 'logs', cost: 75, reads: 'logs' },
  // eth: filters (state on one node)
  eth_newFilter: { needs: 'any', filter: 'create', cost: 20, reads: 'filter' },
  eth_newBlockFilter: { needs: 'any', filter: 'create', cost: 20, reads: 'filter' },
  eth_newPendingTransactionFilter: { needs: 'any', filter: 'create', cost: 20, reads: 'filter' },
  eth_getFilterChanges: { needs: 'any', filter: 'use', cost: 20, reads: 'filter' },
  eth_getFilterLogs: { needs: 'any', filter: 'use', cost: 75, reads: 'logs' },
  eth_uninstallFilter: { needs: 'any', filter: 'uninstall', cost: 10, reads: 'filter' },
  // eth: subscriptions (WebSocket only; refused over HTTP by the policy)
  eth_subscribe: { needs: 'any', local: 'subscribe', cost: 10, reads: 'subscription' },
  eth_unsubscribe: { needs: 'any', local: 'unsubscribe', cost: 10, reads: 'subscription' },
  // net, web3
  net_version: any(0, 'chain config'),
  net_listening: any(0, 'node'),
  net_peerCount: any(0, 'node'),
  web3_clientVersion: any(0, 'node'),
  web3_sha3: any(10, 'nothing'),
  // txpool
  txpool_content: any(200, 'pool'),
  txpool_contentFrom: any(100, 'pool'),
  txpool_status: any(20, 'pool'),
  txpool_inspect: any(100, 'pool'),
  // debug (full and archive nodes)
  debug_traceTransaction: any(309, 'trace', { heavy: true }),
  debug_traceCall: at(1, 309, 'trace', { heavy: true }),
  debug_traceCallMany: at(1, 497, 'trace', { heavy: true }),
  debug_traceBlockByNumber: at(0, 497, 'trace', { heavy: true }),
  debug_traceBlockByHash: any(497, 'trace', { heavy: true }),
  debug_traceBlock: any(497, 'trace', { heavy: true }),
  debug_executionWitness: at(0, 497, 'witness', { heavy: true }),
  debug_getRawBlock: at(0, 20, 'block'),
  debug_getRawHeader: at(0, 20, 'block'),
  debug_getRawReceipts: at(0, 50, 'receipts'),
  debug_getRawTransaction: any(17, 'transaction'),
  debug_getRawBlockAccessList: at(0, 50, 'block'),
  debug_getBadBlocks: any(20, 'block'),
  debug_storageRangeAt: any(200, 'state', { heavy: true }),
  debug_getModifiedAccountsByNumber: any(200, 'state', { heavy: true }),
  debug_getModifiedAccountsByHash: any(200, 'state', { heavy: true }),
  // trace (archive nodes only)
  trace_transaction: archive(40, { heavy: true }),
  trace_get: archive(17),
  trace_block: archive(500, { heavy: true }),
  trace_filter: archive(75, { heavy: true }),
  trace_call: archive(75),
  trace_callMany: archive(150),
  trace_rawTransaction: archive(75),
  trace_replayTransaction: archive(2983, { heavy: true }),
  trace_replayBlockTransactions: archive(2983, { heavy: true }),
})

/** Namespaces the spec serves: the table's, and those an operator's forwardMethods usually names. */
export const SERVED_NAMESPACES: readonly string[] = Object.freeze(['eth', 'net', 'web3', 'txpool', 'debug', 'trace'])

/**
 * What a call of a method not in the table costs when the network forwards it (forwardMethods):
 * what it does is unknown, so it is priced as a block's trace (debug_traceBlock 497, trace_block
 * 500) and bounded as a heavy call; config `methodCosts` prices a forwarded method the operator knows.
 */
export const UNLISTED_COST = 500

/**
 * A method a network's forwardMethods allows, outside the table (see MethodSpec.unlisted). Full
 * nodes first, as the table's debug_ methods; trace_ needs an archive node.
 */
export const UNLISTED: MethodSpec = Object.freeze({ needs: 'any', unlisted: true, heavy: true, cost: UNLISTED_COST, reads: 'unknown' })
export const UNLISTED_TRACE: MethodSpec = Object.freeze({ needs: 'archive', unlisted: true, heavy: true, cost: UNLISTED_COST, reads: 'unknown' })
