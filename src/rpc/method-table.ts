/**
 * The methods the gateway serves, by namespace, and what the router needs to know of each: the
 * node kind it needs and where its block parameter is. The spec's table is the common set; the
 * rest of the Ethereum execution API's read and send-signed methods are here too, because clients
 * call them before they ever send a transaction (eth_chainId, eth_feeHistory, eth_getProof…).
 * A method that is not here, in a namespace the gateway serves, goes to the nodes with cautious
 * defaults (UNLISTED); one that would operate or change the node is refused with -32601 and why.
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
  /**
   * Not in this table, in a served namespace: forwarded as the client sent it, never cached, shared
   * in flight nor hedged, and not tried on another node after a time-out (what it does is unknown:
   * it might send something).
   */
  readonly unlisted?: true
}

const any = (cost: number): MethodSpec => ({ needs: 'any', cost })
const at = (i: number, cost: number, extra: Partial<MethodSpec> = {}): MethodSpec => ({ needs: 'any', block: { at: i }, cost, ...extra })
const archive = (cost: number, extra: Partial<MethodSpec> = {}): MethodSpec => ({ needs: 'archive', cost, ...extra })

export const METHODS: Readonly<Record<string, MethodSpec>> = Object.freeze({
  // eth: chain state and blocks
  eth_blockNumber: any(10),
  eth_chainId: any(0),
  eth_syncing: any(0),
  eth_protocolVersion: any(0),
  eth_gasPrice: any(20),
  eth_maxPriorityFeePerGas: any(10),
  eth_blobBaseFee: any(10),
  eth_feeHistory: at(1, 10),
  eth_getBalance: at(1, 19),
  eth_getCode: at(1, 19),
  eth_getStorageAt: at(2, 17),
  eth_getTransactionCount: at(1, 26),
  eth_getProof: at(2, 21),
  eth_call: at(1, 26),
  eth_estimateGas: at(1, 87),
  eth_createAccessList: at(1, 26),
  eth_simulateV1: at(1, 87),
  eth_getBlockByNumber: at(0, 16),
  eth_getBlockByHash: any(21),
  eth_getBlockReceipts: at(0, 500, { heavy: true }),
  eth_getBlockTransactionCountByNumber: at(0, 20),
  eth_getBlockTransactionCountByHash: any(20),
  eth_getUncleCountByBlockNumber: at(0, 20),
  eth_getUncleCountByBlockHash: any(20),
  eth_getUncleByBlockNumberAndIndex: at(0, 20),
  eth_getUncleByBlockHashAndIndex: any(20),
  eth_getHeaderByNumber: at(0, 16),
  eth_getHeaderByHash: any(21),
  // eth: transactions and logs
  eth_getTransactionByHash: any(17),
  eth_getRawTransactionByHash: any(17),
  eth_getTransactionByBlockNumberAndIndex: at(0, 15),
  eth_getTransactionByBlockHashAndIndex: any(15),
  eth_getTransactionReceipt: any(15),
  eth_sendRawTransaction: { needs: 'any', path: 'send', cost: 250 },
  eth_getLogs: { needs: 'any', block: { filter: true }, heavy: true, path: 'logs', cost: 75 },
  // eth: filters (state on one node)
  eth_newFilter: { needs: 'any', filter: 'create', cost: 20 },
  eth_newBlockFilter: { needs: 'any', filter: 'create', cost: 20 },
  eth_newPendingTransactionFilter: { needs: 'any', filter: 'create', cost: 20 },
  eth_getFilterChanges: { needs: 'any', filter: 'use', cost: 20 },
  eth_getFilterLogs: { needs: 'any', filter: 'use', cost: 75 },
  eth_uninstallFilter: { needs: 'any', filter: 'uninstall', cost: 10 },
  // eth: subscriptions (WebSocket only; refused over HTTP by the policy)
  eth_subscribe: { needs: 'any', local: 'subscribe', cost: 10 },
  eth_unsubscribe: { needs: 'any', local: 'unsubscribe', cost: 10 },
  // net, web3
  net_version: any(0),
  net_listening: any(0),
  net_peerCount: any(0),
  web3_clientVersion: any(0),
  web3_sha3: any(10),
  // txpool
  txpool_content: any(200),
  txpool_contentFrom: any(100),
  txpool_status: any(20),
  txpool_inspect: any(100),
  // debug (full and archive nodes)
  debug_traceTransaction: { needs: 'any', heavy: true, cost: 309 },
  debug_traceCall: at(1, 309, { heavy: true }),
  debug_traceBlockByNumber: at(0, 497, { heavy: true }),
  debug_traceBlockByHash: { needs: 'any', heavy: true, cost: 497 },
  debug_traceBlock: { needs: 'any', heavy: true, cost: 497 },
  debug_getRawBlock: at(0, 20),
  debug_getRawHeader: at(0, 20),
  debug_getRawReceipts: at(0, 50),
  debug_getRawTransaction: any(17),
  debug_getBadBlocks: any(20),
  debug_storageRangeAt: { needs: 'any', heavy: true, cost: 200 },
  debug_getModifiedAccountsByNumber: { needs: 'any', heavy: true, cost: 200 },
  debug_getModifiedAccountsByHash: { needs: 'any', heavy: true, cost: 200 },
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

/** Refused with a reason, though a node may know them: they use or change the node itself. */
export const REFUSED: Readonly<Record<string, string>> = Object.freeze({
  eth_sign: 'signs with the node’s own accounts; sign locally and use eth_sendRawTransaction',
  eth_signTransaction: 'signs with the node’s own accounts; sign locally and use eth_sendRawTransaction',
  eth_signTypedData: 'signs with the node’s own accounts; sign locally',
  eth_signTypedData_v3: 'signs with the node’s own accounts; sign locally',
  eth_signTypedData_v4: 'signs with the node’s own accounts; sign locally',
  eth_sendTransaction: 'sends from the node’s own accounts; sign locally and use eth_sendRawTransaction',
  eth_accounts: 'the node’s accounts are not yours; use your wallet’s accounts',
  eth_coinbase: 'describes the node itself',
  eth_mining: 'describes the node itself',
  eth_hashrate: 'describes the node itself',
  eth_getWork: 'mining is not offered',
  eth_submitWork: 'mining is not offered',
  eth_submitHashrate: 'mining is not offered',
  // geth's debug_ methods that operate the node process rather than read the chain
  debug_verbosity: 'operates the node process',
  debug_vmodule: 'operates the node process',
  debug_backtraceAt: 'operates the node process',
  debug_freeOSMemory: 'operates the node process',
  debug_gcStats: 'describes the node process',
  debug_memStats: 'describes the node process',
  debug_stacks: 'describes the node process',
  debug_cpuProfile: 'profiles the node process',
  debug_goTrace: 'profiles the node process',
  debug_blockProfile: 'profiles the node process',
  debug_mutexProfile: 'profiles the node process',
  debug_printBlock: 'describes the node’s database',
})

/**
 * Refused by prefix, with the reason: families of methods that operate the node (settings,
 * profiles, files on its disk, its database) or sign with its accounts, whatever their full name.
 */
export const REFUSED_PREFIXES: ReadonlyArray<readonly [prefix: string, reason: string]> = Object.freeze([
  ['debug_set', 'changes the node’s settings'],
  ['debug_start', 'starts profiling or tracing the node process'],
  ['debug_stop', 'stops profiling or tracing the node process'],
  ['debug_write', 'writes files on the node’s disk'],
  ['debug_standardTrace', 'writes files on the node’s disk'],
  ['debug_chaindb', 'operates the node’s database'],
  ['debug_db', 'reads the node’s database directly'],
  ['eth_sign', 'signs with the node’s own accounts; sign locally and use eth_sendRawTransaction'],
] as const)

/** Namespaces whose every method would expose or change the node (admin, accounts, mining, dev nodes). */
export const REFUSED_NAMESPACES: Readonly<Record<string, string>> = Object.freeze({
  admin: 'administers the node',
  personal: 'uses the node’s own accounts',
  miner: 'controls the node’s mining',
  clique: 'controls the node’s consensus',
  engine: 'is the consensus client’s API',
  parity: 'administers the node (parity_set*) or describes it',
  signer: 'uses the node’s own accounts',
  les: 'administers the node',
  anvil: 'controls a development node',
  evm: 'controls a development node',
  hardhat: 'controls a development node',
  ganache: 'controls a development node',
  tenderly: 'controls a development node',
})

/** Namespaces the spec serves. */
export const SERVED_NAMESPACES: readonly string[] = Object.freeze(['eth', 'net', 'web3', 'txpool', 'debug', 'trace'])

/**
 * What a call of a method not in the table costs: what it does is unknown, so it is priced above
 * every common read (an eth_call is 26), and a trace_ method as a block's trace (trace_block 500).
 */
export const UNLISTED_COST = 100
export const UNLISTED_TRACE_COST = 500

/**
 * A method of a served namespace that is not in the table (eth_getAccountInfo, eth_config,
 * debug_getRawBlockAccessList…): the nodes may serve it, so it goes to them, cautiously (see
 * MethodSpec.unlisted). Full nodes first, as the table's debug_ methods; trace_ needs an archive node.
 */
export const UNLISTED: MethodSpec = Object.freeze({ needs: 'any', unlisted: true, cost: UNLISTED_COST })
export const UNLISTED_TRACE: MethodSpec = Object.freeze({ needs: 'archive', unlisted: true, cost: UNLISTED_TRACE_COST })
