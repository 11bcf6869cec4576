import t from 'tap'
import { classify } from '../../src/gateway/call-class.js'
import { METHODS } from '../../src/rpc/method-table.js'

const of = (method: string, node?: string, verify: 'off' | 'reads' | 'calls' = 'off') => classify(METHODS[method], node, verify, method)

t.test('a method not in the table is unlisted, even pinned', async (t) => {
  t.equal(of('debug_unknownThing'), 'unlisted')
  t.equal(of('debug_unknownThing', 'node-a'), 'unlisted')
})

t.test('filter calls and calls pinned to a node go as they are', async (t) => {
  t.equal(of('eth_newFilter'), 'pinned', 'a filter is made on the node that keeps it')
  t.equal(of('eth_getFilterChanges', 'node-a'), 'pinned')
  t.equal(of('eth_uninstallFilter', 'node-a'), 'pinned')
  t.equal(of('eth_getBalance', 'node-a', 'reads'), 'pinned', 'a pinned read is not proven')
})

t.test('the paths of the method table before verification', async (t) => {
  t.equal(of('eth_sendRawTransaction'), 'send')
  t.equal(of('eth_getLogs'), 'logs')
  t.equal(of('eth_getLogs', undefined, 'reads'), 'logs', 'split first; its parts are proven')
})

t.test('reads the network proves, and the rest by the table', async (t) => {
  t.equal(of('eth_getBalance', undefined, 'reads'), 'verified')
  t.equal(of('eth_getBalance'), 'table')
  t.equal(of('eth_call', undefined, 'reads'), 'table', 'eth_call is run only when the network verifies calls')
  t.equal(of('eth_call', undefined, 'calls'), 'verified')
  t.equal(of('eth_blockNumber', undefined, 'reads'), 'table')
  t.equal(of('trace_block'), 'table')
})
