import t from 'tap'
import { parseSubscribe } from '../../src/ws/subscription-request.js'

const A = '0x' + 'aa'.repeat(20)
const B = '0x' + 'bb'.repeat(20)
const T1 = '0x' + '11'.repeat(32)
const T2 = '0x' + '22'.repeat(32)
const keyOf = (params: unknown) => {
  const r = parseSubscribe(params)
  return r.ok ? r.request.key : `error: ${r.message}`
}

t.test('newBlockHeaders is newHeads upstream, and shares its key', async (t) => {
  t.same(parseSubscribe(['newBlockHeaders']), { ok: true, request: { kind: 'newHeads', upstreamParams: ['newHeads'], key: 'newHeads' } })
  t.equal(keyOf(['newHeads']), keyOf(['newBlockHeaders']))
})

t.test('logs filters that mean the same share a key, whatever their case, order or form', async (t) => {
  const base = keyOf(['logs', { address: [A, B], topics: [T1] }])
  t.equal(keyOf(['logs', { address: [B.toUpperCase().replace('0X', '0x'), A], topics: [[T1]] }]), base)
  t.equal(keyOf(['logs', { address: [A, B, A], topics: [T1, null, []], fromBlock: 'latest' }]), base, 'duplicates, trailing any-positions and fromBlock latest')
  t.not(keyOf(['logs', { address: [A, B], topics: [null, T1] }]), base, 'a topic in another position is another filter')
  t.not(keyOf(['logs', { address: [A], topics: [T1] }]), base)
  t.equal(keyOf(['logs']), keyOf(['logs', {}]), 'no filter: every log')
  const one = parseSubscribe(['logs', { address: A, topics: [[T2, T1]] }])
  t.same(one.ok && one.request.upstreamParams, ['logs', { address: A, topics: [[T1, T2]] }], 'sent upstream in the canonical form')
})

t.test('newPendingTransactions with and without whole transactions are two subscriptions', async (t) => {
  t.not(keyOf(['newPendingTransactions']), keyOf(['newPendingTransactions', true]))
  t.equal(keyOf(['newPendingTransactions', false]), keyOf(['newPendingTransactions']))
})

t.test('what is refused, with -32602 messages that say why', async (t) => {
  t.match(keyOf([]), /error: Invalid params: eth_subscribe takes \[kind/)
  t.match(keyOf(['syncing']), /unsupported subscription kind "syncing"/)
  t.match(keyOf(['logs', { fromBlock: '0x1' }]), /new blocks only/)
  t.match(keyOf(['logs', { address: '0x12' }]), /invalid address/)
  t.match(keyOf(['logs', { topics: ['0x12'] }]), /invalid topic/)
  t.match(keyOf(['logs', { topics: [T1, T1, T1, T1, T1] }]), /at most 4/)
  t.match(keyOf(['logs', { toAddress: A }]), /unknown logs filter field/)
  t.match(keyOf(['newPendingTransactions', 'yes']), /true for whole transactions/)
})
