import t from 'tap'
import { cacheRuleFor, isFinal, mayBeFinal } from '../../src/cache/cache-rules.js'

const HASH = '0x' + 'ab'.repeat(32)

t.test('by block number: final at or below the finalized block, never for tags', async (t) => {
  const rule = cacheRuleFor('eth_getBlockByNumber', ['0x10', false])!
  t.same(rule, { final: 'block', block: 16 })
  t.ok(isFinal(rule, {}, 16))
  t.notOk(isFinal(rule, {}, 15), 'above the finalized block')
  t.notOk(isFinal(rule, {}, undefined), 'finality not known yet')
  t.notOk(isFinal(rule, null, 100), 'a null answer never')
  t.notOk(mayBeFinal(rule, 15))
  for (const tag of ['latest', 'pending', 'safe', 'finalized']) t.equal(cacheRuleFor('eth_getBlockByNumber', [tag, false]), undefined, tag)
  t.same(cacheRuleFor('eth_getBlockByNumber', ['earliest', false]), { final: 'block', block: 0 })
})

t.test('by hash: final when the block in the answer is', async (t) => {
  const rule = cacheRuleFor('eth_getTransactionReceipt', [HASH])!
  t.equal(rule.final, 'result')
  t.ok(isFinal(rule, { blockNumber: '0x5' }, 5))
  t.notOk(isFinal(rule, { blockNumber: '0x6' }, 5))
  t.notOk(isFinal(rule, { blockNumber: null }, 5), 'pending transaction')
  t.ok(isFinal(cacheRuleFor('eth_getBlockByHash', [HASH, true])!, { number: '0x1' }, 1))
  t.ok(isFinal(cacheRuleFor('eth_getBlockReceipts', [HASH])!, [{ blockNumber: '0x1' }], 1))
  t.notOk(isFinal(cacheRuleFor('eth_getBlockReceipts', [HASH])!, [], 1), 'no receipts: no block number to judge')
})

t.test('state: by block hash always, by number when final, never at a tag or with requireCanonical', async (t) => {
  const call = { to: '0x' + '11'.repeat(20), data: '0x' }
  t.same(cacheRuleFor('eth_call', [call, { blockHash: HASH }]), { final: 'by-hash' })
  t.same(cacheRuleFor('eth_call', [call, HASH]), { final: 'by-hash' })
  t.equal(cacheRuleFor('eth_call', [call, { blockHash: HASH, requireCanonical: true }]), undefined)
  t.same(cacheRuleFor('eth_getStorageAt', ['0x' + '11'.repeat(20), '0x0', '0x20']), { final: 'block', block: 32 })
  t.same(cacheRuleFor('eth_getBalance', ['0x' + '11'.repeat(20), { blockNumber: '0x2' }]), { final: 'block', block: 2 })
  t.equal(cacheRuleFor('eth_getBalance', ['0x' + '11'.repeat(20), 'latest']), undefined)
})

t.test('logs: numeric ranges by their end; blockHash by the answer', async (t) => {
  t.same(cacheRuleFor('eth_getLogs', [{ fromBlock: '0x1', toBlock: '0x9' }]), { final: 'block', block: 9 })
  t.equal(cacheRuleFor('eth_getLogs', [{ fromBlock: '0x1', toBlock: 'latest' }]), undefined)
  t.equal(cacheRuleFor('eth_getLogs', [{ fromBlock: '0x9', toBlock: '0x1' }]), undefined)
  t.equal(cacheRuleFor('eth_getLogs', [{ blockHash: HASH }])?.final, 'result')
})

t.test('always, and never', async (t) => {
  t.same(cacheRuleFor('eth_chainId', []), { final: 'always' })
  for (const m of ['eth_blockNumber', 'eth_gasPrice', 'eth_sendRawTransaction', 'eth_getFilterChanges', 'txpool_content', 'eth_estimateGas']) {
    t.equal(cacheRuleFor(m, []), undefined, m)
  }
})
