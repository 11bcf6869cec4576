/**
 * Methods that operate, describe or spend from the node itself, by name, as the five execution
 * clients implement them: refused with -32601 and the reason, whatever the method table or an
 * operator's `forwardMethods` pattern says (a pattern such as `debug_*` opens none of these).
 *
 * Kept against each client's own method list (the snapshots read are named with each client):
 * - geth (go-ethereum 02b73d4, 2026-08-20): internal/debug/api.go and trace.go, eth/api_debug.go,
 *   internal/ethapi/api.go (TransactionAPI, EthereumAccountAPI, DebugAPI), eth/tracers/api.go,
 *   eth/syncer/syncer.go, node/api.go (p2pDebugAPI); LES server (les/api.go, until geth 1.13);
 * - Nethermind: Nethermind.JsonRpc/Modules/DebugModule/IDebugRpcModule.cs, Net/INetRpcModule.cs,
 *   Eth/IEthRpcModule.cs;
 * - Besu (3fd224e, 2026-03-29): ethereum/api/.../jsonrpc/RpcMethod.java, and the same file before
 *   9ebf356 (May 2025, "Removing private transaction management features") for the names still
 *   served by older Besu releases;
 * - Erigon: rpc/jsonrpc/debug_api.go (PrivateDebugAPI), eth_* mining and signing methods;
 * - reth (7b3432d, 2026-08-21): crates/rpc/rpc-api/src/debug.rs, crates/rpc/rpc-eth-api/src/core.rs
 *   and bundle.rs.
 * Names in a refused namespace (admin_, personal_, miner_, engine_…: REFUSED_NAMESPACES) are not
 * repeated here. test/rpc/node-operating-methods.test.ts holds the method table against this list,
 * and test/security/node-operating-methods.test.ts sends every name through a gateway.
 */

/** Why a method is refused, as the client's error message ends ("…: it <reason>"). */
const PROCESS = 'operates the node process'
const DESCRIBES = 'describes the node process'
const PROFILES = 'profiles the node process'
const DISK = 'reads or writes files on the node’s disk'
const DATABASE = 'reads or changes the node’s database directly'
const CHAIN = 'changes the node’s chain or its sync'
const NETWORK = 'describes the node on the network'
const POOL = 'changes the node’s transaction pool'
const SENDS = 'sends from the node’s own accounts; sign locally and use eth_sendRawTransaction'
const SIGN_TX = 'signs with the node’s own accounts; sign locally and use eth_sendRawTransaction'
const SIGN = 'signs with the node’s own accounts; sign locally'
const MINING = 'mining is not offered'
const BYPASS = 'sends transactions outside eth_sendRawTransaction; use eth_sendRawTransaction'
const PRIVATE = 'sends private transactions through the node; use eth_sendRawTransaction'

export interface NodeOperatingMethod {
  /** What the client is told: "it <reason>". */
  readonly reason: string
  /** The clients that implement it (geth, Nethermind, Besu, Erigon, reth). */
  readonly clients: string
}

const m = (reason: string, clients: string): NodeOperatingMethod => Object.freeze({ reason, clients })

export const NODE_OPERATING_METHODS: Readonly<Record<string, NodeOperatingMethod>> = Object.freeze({
  // eth: the node's own accounts, signing and mining
  eth_accounts: m('the node’s accounts are not yours; use your wallet’s accounts', 'geth, Nethermind, Besu, Erigon, reth'),
  eth_coinbase: m('describes the node itself', 'geth, Nethermind, Besu, Erigon, reth'),
  eth_sign: m(SIGN_TX, 'geth, Nethermind, Erigon, reth'),
  eth_signTransaction: m(SIGN_TX, 'geth, Erigon, reth'),
  eth_signTypedData: m(SIGN, 'reth'),
  eth_signTypedData_v3: m(SIGN, 'wallets (EIP-712 v3)'),
  eth_signTypedData_v4: m(SIGN, 'wallets (EIP-712 v4)'),
  eth_sendTransaction: m(SENDS, 'geth, Nethermind, Besu, Erigon, reth'),
  eth_pendingTransactions: m('lists the transactions of the node’s own accounts', 'geth, reth'),
  eth_resend: m(SENDS, 'geth'),
  eth_mining: m(MINING, 'geth (until 1.14), Besu, Erigon, reth'),
  eth_hashrate: m(MINING, 'geth (until 1.14), Besu (until 25.5), Erigon, reth'),
  eth_getWork: m(MINING, 'geth (until 1.14), Besu (until 25.5), Erigon, reth'),
  eth_submitWork: m(MINING, 'geth (until 1.14), Besu (until 25.5), Erigon, reth'),
  eth_submitHashrate: m(MINING, 'geth (until 1.14), Besu (until 25.5), Erigon, reth'),
  eth_getMinerDataByBlockHash: m('describes the node’s mining', 'Besu (until 25.5)'),
  eth_getMinerDataByBlockNumber: m('describes the node’s mining', 'Besu (until 25.5)'),
  eth_snapshot: m(DATABASE, 'Nethermind'),
  eth_sendRawPrivateTransaction: m(PRIVATE, 'Besu (until 25.5)'),
  eth_sendPrivateTransaction: m(PRIVATE, 'reth (bundle API)'),
  eth_sendPrivateRawTransaction: m(PRIVATE, 'reth (bundle API)'),
  eth_cancelPrivateTransaction: m(PRIVATE, 'reth (bundle API)'),
  eth_sendBundle: m(BYPASS, 'reth (bundle API)'),
  eth_cancelBundle: m(BYPASS, 'reth (bundle API)'),
  // net: the node's own identity on the network
  net_enode: m(NETWORK, 'Besu'),
  net_services: m(NETWORK, 'Besu'),
  net_localEnode: m(NETWORK, 'Nethermind'),
  net_localAddress: m(NETWORK, 'Nethermind'),
  // debug: the node process (settings, memory, profiles)
  debug_verbosity: m(PROCESS, 'geth'),
  debug_vmodule: m(PROCESS, 'geth'),
  debug_backtraceAt: m(PROCESS, 'geth (until 1.12)'),
  debug_freeOSMemory: m(PROCESS, 'geth, Erigon, reth'),
  debug_setGCPercent: m(PROCESS, 'geth, Erigon, reth'),
  debug_setMemoryLimit: m(PROCESS, 'geth, Erigon'),
  debug_freezeClient: m('freezes a client of the node', 'geth LES server (until 1.13)'),
  debug_gcStats: m(DESCRIBES, 'geth, Nethermind, Erigon, reth'),
  debug_memStats: m(DESCRIBES, 'geth, Nethermind, Erigon, reth'),
  debug_stacks: m(DESCRIBES, 'geth'),
  debug_metrics: m(DESCRIBES, 'Besu'),
  debug_getConfigValue: m('reads the node’s configuration', 'Nethermind'),
  debug_getSyncStage: m(DESCRIBES, 'Nethermind'),
  debug_discoveryV4Table: m(NETWORK, 'geth'),
  debug_cpuProfile: m(PROFILES, 'geth'),
  debug_startCPUProfile: m(PROFILES, 'geth'),
  debug_stopCPUProfile: m(PROFILES, 'geth'),
  debug_goTrace: m(PROFILES, 'geth'),
  debug_startGoTrace: m(PROFILES, 'geth'),
  debug_stopGoTrace: m(PROFILES, 'geth'),
  debug_blockProfile: m(PROFILES, 'geth'),
  debug_setBlockProfileRate: m(PROFILES, 'geth'),
  debug_writeBlockProfile: m(PROFILES, 'geth'),
  debug_mutexProfile: m(PROFILES, 'geth'),
  debug_setMutexProfileFraction: m(PROFILES, 'geth'),
  debug_writeMutexProfile: m(PROFILES, 'geth'),
  debug_writeMemProfile: m(PROFILES, 'geth'),
  // debug: files on the node's disk
  debug_traceBlockFromFile: m(DISK, 'geth, Nethermind'),
  debug_standardTraceBlockToFile: m(DISK, 'geth, Nethermind, Besu, reth'),
  debug_standardTraceBadBlockToFile: m(DISK, 'geth, Besu, reth'),
  // debug: the node's database and chain
  debug_printBlock: m('describes the node’s database', 'geth, reth'),
  debug_chaindbProperty: m(DATABASE, 'geth, reth'),
  debug_chaindbCompact: m(DATABASE, 'geth, reth'),
  debug_dbGet: m(DATABASE, 'geth, reth'),
  debug_dbAncient: m(DATABASE, 'geth, reth'),
  debug_dbAncients: m(DATABASE, 'geth, reth'),
  debug_getFromDb: m(DATABASE, 'Nethermind'),
  debug_getChainLevel: m(DATABASE, 'Nethermind'),
  debug_deleteChainSlice: m(DATABASE, 'Nethermind'),
  debug_migrateReceipts: m(DATABASE, 'Nethermind'),
  debug_insertReceipts: m(DATABASE, 'Nethermind'),
  debug_getAccessibleState: m('describes the state the node keeps', 'geth, reth'),
  debug_setTrieFlushInterval: m(PROCESS, 'geth, reth'),
  debug_getTrieFlushInterval: m(DESCRIBES, 'geth'),
  debug_setHead: m(CHAIN, 'geth, Nethermind, Besu, reth'),
  debug_resetHead: m(CHAIN, 'Nethermind'),
  debug_resyncWorldState: m(CHAIN, 'Besu'),
  debug_replayBlock: m(CHAIN, 'Besu'),
  debug_sync: m(CHAIN, 'geth'),
  // debug: the node's transaction pool, outside the send path
  debug_clearTxpool: m(POOL, 'geth, reth'),
  debug_batchSendRawTransaction: m(BYPASS, 'Besu'),
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
  testing: 'builds blocks on the node',
})
