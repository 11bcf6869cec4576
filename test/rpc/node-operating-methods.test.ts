import t from 'tap'
import { MethodRules, methodRule } from '../../src/rpc/method-policy.js'
import { METHODS } from '../../src/rpc/method-table.js'
import { NODE_OPERATING_METHODS } from '../../src/rpc/node-operating-methods.js'

// Issue 38, item 1: forward by allowlist. The method table is held against the list of methods
// that operate the node (geth, Nethermind, Besu, Erigon, reth): none of them is in the table, and
// each is refused by the policy even where a network's forwardMethods pattern would match it.
// On main the 21 names the issue tried were all forwarded (debug and eth served): the first
// subtest fails there for each of them.

/** The names issue 38 found forwarded to a node, from each client's own method list. */
const FOUND_FORWARDED = [
  'debug_resetHead',
  'debug_deleteChainSlice',
  'debug_migrateReceipts',
  'debug_insertReceipts',
  'debug_getFromDb',
  'debug_getConfigValue',
  'debug_getSyncStage',
  'debug_getChainLevel',
  'net_localEnode',
  'net_localAddress',
  'debug_resyncWorldState',
  'debug_replayBlock',
  'debug_batchSendRawTransaction',
  'debug_metrics',
  'net_enode',
  'net_services',
  'eth_sendRawPrivateTransaction',
  'debug_traceBlockFromFile',
  'eth_pendingTransactions',
  'eth_resend',
  'debug_freezeClient',
]

/**
 * The methods of the execution-API spec (ethereum/execution-apis 033ca6e, src/eth, src/debug,
 * src/txpool): each is in the table (a read or a signed send), or refused as the node's own
 * (signing, accounts, coinbase). A method the spec adds must be sorted into one or the other.
 */
const SPEC_METHODS = [
  'eth_getBlockByHash',
  'eth_getBlockByNumber',
  'eth_getBlockTransactionCountByHash',
  'eth_getBlockTransactionCountByNumber',
  'eth_getBlockReceipts',
  'eth_getBlockAccessList',
  'eth_capabilities',
  'eth_chainId',
  'eth_syncing',
  'eth_coinbase',
  'eth_accounts',
  'eth_blockNumber',
  'eth_config',
  'net_version',
  'eth_call',
  'eth_estimateGas',
  'eth_createAccessList',
  'eth_simulateV1',
  'eth_gasPrice',
  'eth_baseFee',
  'eth_blobBaseFee',
  'eth_maxPriorityFeePerGas',
  'eth_feeHistory',
  'eth_fillTransaction',
  'eth_newFilter',
  'eth_newBlockFilter',
  'eth_newPendingTransactionFilter',
  'eth_uninstallFilter',
  'eth_getFilterChanges',
  'eth_getFilterLogs',
  'eth_getLogs',
  'eth_sign',
  'eth_signTransaction',
  'eth_getBalance',
  'eth_getStorageAt',
  'eth_getStorageValues',
  'eth_getTransactionCount',
  'eth_getCode',
  'eth_getProof',
  'eth_sendTransaction',
  'eth_sendRawTransaction',
  'eth_getTransactionByHash',
  'eth_getTransactionByBlockHashAndIndex',
  'eth_getTransactionByBlockNumberAndIndex',
  'eth_getTransactionReceipt',
  'debug_getRawHeader',
  'debug_getRawBlock',
  'debug_getRawTransaction',
  'debug_getRawReceipts',
  'debug_getRawBlockAccessList',
  'debug_getBadBlocks',
  'debug_traceBlockByNumber',
  'debug_traceBlockByHash',
  'debug_traceTransaction',
  'txpool_status',
  'txpool_content',
  'txpool_contentFrom',
]

/** Patterns an operator might write to open a namespace whole: they must open none of the list. */
const OPEN_EVERYTHING = ['eth_*', 'net_*', 'web3_*', 'txpool_*', 'debug_*', 'trace_*', ...Object.keys(NODE_OPERATING_METHODS)]

t.test('every name issue 38 found forwarded is on the list, and refused with -32601 and the reason', async (t) => {
  for (const method of FOUND_FORWARDED) {
    t.ok(Object.hasOwn(NODE_OPERATING_METHODS, method), `${method} is on the list`)
    const rule = methodRule(method, 'http')
    t.notOk(rule.ok, `${method} is refused`)
    if (!rule.ok) t.match(rule.message, new RegExp(`^Method not found: ${method} is not available through this gateway: it `), method)
  }
})

t.test('no method of the list is in the table, and each is refused on both transports, whatever forwardMethods says', async (t) => {
  const rules = new MethodRules({}, { 'eth-1': OPEN_EVERYTHING })
  const names = Object.keys(NODE_OPERATING_METHODS)
  t.ok(names.length >= 60, `${names.length} names`)
  for (const method of names) {
    t.notOk(Object.hasOwn(METHODS, method), `${method} is not in the method table`)
    for (const transport of ['http', 'ws'] as const) {
      const rule = rules.rule(method, transport, 'eth-1')
      t.notOk(rule.ok, `${method} over ${transport}: refused though a pattern matches it`)
      if (!rule.ok) t.match(rule.message, /is not available through this gateway: it /, method)
    }
  }
  t.ok(rules.rule('debug_dumpBlock', 'http', 'eth-1').ok, 'the pattern still opens what the list does not name')
})

t.test('each method of the execution-API spec is in the table or refused as the node’s own', async (t) => {
  for (const method of SPEC_METHODS) {
    const listed = Object.hasOwn(METHODS, method)
    const refused = Object.hasOwn(NODE_OPERATING_METHODS, method)
    t.ok(listed !== refused, `${method}: ${listed ? 'in the table' : refused ? 'refused' : 'neither'}`)
  }
})

t.test('every method of the table says what it reads and what it costs', async (t) => {
  for (const [method, spec] of Object.entries(METHODS)) {
    t.ok(typeof spec.reads === 'string' && spec.reads !== 'unknown', `${method} reads ${spec.reads}`)
    t.ok(Number.isInteger(spec.cost), `${method} costs ${spec.cost}`)
  }
})

t.test('an unlisted method is refused, without a node, unless its network forwards it', async (t) => {
  const rules = new MethodRules({}, { 'eth-1': ['debug_getRaw*', 'ots_getApiLevel'] })
  const refused = rules.rule('debug_dumpBlock', 'http', 'eth-1')
  t.notOk(refused.ok)
  if (!refused.ok) {
    t.equal(
      refused.message,
      'Method not found: debug_dumpBlock is not forwarded by this gateway (it is not in its method table, docs/costs.md); the operator may allow it on this network with forwardMethods',
    )
  }
  const forwarded = rules.rule('debug_getRawThing', 'http', 'eth-1')
  t.ok(forwarded.ok && forwarded.spec.unlisted === true && forwarded.spec.heavy === true, 'a prefix pattern forwards it, as a heavy call')
  t.ok(rules.rule('ots_getApiLevel', 'ws', 'eth-1').ok, 'an exact name, in a namespace the table does not serve')
  t.notOk(rules.rule('debug_getRawThing', 'http', 'pol-1').ok, 'on another network: refused')
  t.notOk(rules.rule('debug_getRawThing', 'http').ok, 'with no network: refused')
  const trace = rules.rule('trace_newThing', 'http', 'eth-1')
  t.notOk(trace.ok, 'trace_ is not opened by a debug_ pattern')
  rules.apply({ forwardMethods: { 'eth-1': [] } })
  t.notOk(rules.rule('debug_getRawThing', 'http', 'eth-1').ok, 'a reload that empties the list closes it from the next call')
  rules.apply({ forwardMethods: { 'eth-1': ['trace_*'] } })
  const traced = rules.rule('trace_newThing', 'http', 'eth-1')
  t.ok(traced.ok && traced.spec.needs === 'archive', 'a forwarded trace_ method needs an archive node')
  t.equal(rules.rule('eth_call', 'http', 'eth-1'), rules.rule('eth_call', 'http'), 'a listed method: the same rule whatever the network')
})
