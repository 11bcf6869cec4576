import t from 'tap'
import { Answer } from '../../src/upstream/answer.js'
import { saysMethodMissing, undecidedOverWs } from '../../src/upstream/method-missing.js'
import { saysStatePruned } from '../../src/upstream/state-pruned.js'
import { saysFilterGone } from '../../src/gateway/filter-gone.js'

// What the gateway reads in a node's error: the code each client gives for "method not found" and
// for pruned state (docs/upstream-selection.md, docs/http.md), never words a tenant could put in a
// revert reason.

const err = (error: object): Answer => Answer.ofText(JSON.stringify({ jsonrpc: '2.0', id: 1, error }), true, 'n', 'full')
const revert = (reason: string): Answer => err({ code: 3, message: `execution reverted: ${reason}`, data: '0x08c379a0' })

t.test('method not found: by code, per client', async (t) => {
  t.ok(saysMethodMissing('net_peerCount', err({ code: -32601, message: 'the method net_peerCount does not exist/is not available' })), 'geth, Erigon')
  t.ok(saysMethodMissing('net_peerCount', err({ code: -32601, message: 'Method not found' })), 'reth, Besu, anvil over HTTP')
  t.ok(saysMethodMissing('trace_block', err({ code: -32604, message: 'Method not enabled' })), 'Besu, namespace off')
  t.ok(saysMethodMissing('eth_call', err({ code: -32004, message: 'Method not supported' })), 'EIP-1474')
  const hardhat = 'Method eth_getBlockReceipts is not supported'
  t.ok(saysMethodMissing('eth_getBlockReceipts', err({ code: -32004, message: hardhat, data: { message: hardhat } })), 'Hardhat 3: its message again as data')
  t.notOk(saysMethodMissing('eth_getBlockReceipts', err({ code: -32004, message: hardhat, data: { message: 'other' } })), 'data that is not its message')
  t.notOk(saysMethodMissing('eth_getBlockReceipts', err({ code: -32004, message: hardhat, data: { message: hardhat, data: '0x' } })), 'data beside its message')
  t.notOk(
    saysMethodMissing('eth_call', err({ code: -32601, message: 'Method not found', data: { message: 'Method not found' } })),
    'only -32004 may repeat itself',
  )
  t.ok(
    saysMethodMissing(
      'trace_block',
      err({ code: -32600, message: "The method 'trace_block' is found but the namespace 'trace' is disabled for http://x. Consider…" }),
    ),
    'Nethermind, namespace off',
  )
  t.notOk(
    saysMethodMissing('eth_call', err({ code: -32600, message: "The method 'trace_block' is found but the namespace 'trace' is disabled" })),
    'naming another method',
  )
  t.notOk(saysMethodMissing('eth_call', err({ code: -32600, message: 'Invalid request' })))
  t.notOk(saysMethodMissing('eth_call', revert('method not found')), 'a revert reason')
  t.notOk(saysMethodMissing('eth_call', err({ code: -32000, message: 'method eth_call is not available' })), 'words without the code')
  t.notOk(saysMethodMissing('eth_call', err({ code: -32601, message: 'Method not found', data: '0x' })), 'an error with data')
  t.notOk(saysMethodMissing('eth_call', Answer.ofText('{"jsonrpc":"2.0","id":1,"result":"0x"}', false, 'n', 'full')), 'a result')
})

t.test("anvil's WebSocket answer is undecided, only in its exact shape", async (t) => {
  t.ok(undecidedOverWs(err({ code: -32602, message: 'data did not match any variant of untagged enum EthRpcCall' })))
  t.notOk(undecidedOverWs(err({ code: -32602, message: 'data did not match any variant of untagged enum EthRpcCall: eth_call' })))
  t.notOk(undecidedOverWs(err({ code: 3, message: 'data did not match any variant of untagged enum EthRpcCall' })))
})

t.test('pruned state: by code and the start of the message, per client', async (t) => {
  const pruned: Array<[string, object]> = [
    ['geth, hash scheme', { code: -32000, message: 'missing trie node 1a2b3c (path ) <nil>' }],
    ['geth, path scheme', { code: -32000, message: 'historical state 0a1b2c is not available' }],
    ['geth, traces', { code: -32000, message: 'required historical state unavailable (reexec=128)' }],
    ['Erigon 3', { code: -32000, message: 'old data not available due to pruning' }],
    ['Nethermind', { code: -32002, message: 'No state available for block 0xabc (12)' }],
    ['Besu', { code: -32000, message: 'World state unavailable' }],
    ['reth', { code: -32603, message: 'state at block #12 is pruned' }],
    ['anvil', { code: -32602, message: 'BlockOutOfRangeError: block height is 300 but requested was 1' }],
    ['EIP-4444', { code: 4444, message: 'pruned history unavailable' }],
  ]
  for (const [who, e] of pruned) t.ok(saysStatePruned(err(e)), who)
  t.notOk(saysStatePruned(err({ code: -32602, message: 'BlockOutOfRangeError: block height is 300 but requested was 301' })), 'anvil: a block not there yet')
  t.notOk(saysStatePruned(revert('missing trie node 1a2b')), 'a revert reason')
  t.notOk(saysStatePruned(revert('pruned')), 'a revert reason')
  t.notOk(saysStatePruned(err({ code: -32000, message: 'execution reverted: missing trie node 1a2b ' })), 'a revert without data')
  t.notOk(saysStatePruned(err({ code: -32000, message: 'missing trie node 1a2b (path ) <nil>', data: '0x' })), 'an error with data')
  t.notOk(saysStatePruned(err({ code: -32000, message: 'header not found' })), 'a block the node does not have is not pruned state')
  const ahead = 'Received invalid block tag 1042. Latest block number is 42'
  t.notOk(saysStatePruned(err({ code: -32000, message: ahead, data: { message: ahead } })), 'Hardhat 3: a block ahead, not pruned state')
})

t.test('a filter gone: by code and message, or Hardhat’s null result', async (t) => {
  const answer = (text: string, isError: boolean) => Answer.ofText(text, isError, 'n', 'full')
  t.ok(saysFilterGone(err({ code: -32000, message: 'filter not found' })), 'geth, anvil')
  t.ok(saysFilterGone(err({ code: -32700, message: 'filter not found' })), 'Ganache 7')
  t.ok(saysFilterGone(answer('{"jsonrpc":"2.0","id":1,"result":null}', false)), 'Hardhat 3: null')
  t.ok(saysFilterGone(answer('{"jsonrpc":"2.0","result":null,"id":"p"}', false)), 'Hardhat 3: null, the id after it')
  t.notOk(saysFilterGone(answer('{"jsonrpc":"2.0","id":1,"result":[]}', false)), 'no changes')
  t.notOk(saysFilterGone(answer('{"jsonrpc":"2.0","id":1,"result":["0xnull"]}', false)), 'a result naming null')
  t.notOk(saysFilterGone(revert('filter not found')), 'a revert reason')
})
