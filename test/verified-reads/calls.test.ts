import t from 'tap'
import { encodeFunctionData, erc20Abi } from 'viem'
import { rpc } from '../helpers/gateway.js'
import { lyingNodes } from '../helpers/lying-nodes.js'
import { metric } from '../helpers/metrics.js'

// Issue 40, item 5: with `verify: "calls"`, eth_call is run by the gateway on proven state and a
// node's answer is handed on only when it is what the run returned. One real anvil behind three
// proxies: two honest and slow, one fast that alters eth_call results and hides state from its
// access lists (the run proves what it reads anyway).

const { anvil, busy, liar, tg, apiKey } = await lyingNodes(t, 'calls')
liar.set('eth_call', { alter: (r) => (typeof r === 'string' && r.length > 2 ? `${r.slice(0, -1)}${r.endsWith('1') ? '2' : '1'}` : r) })
liar.set('eth_createAccessList', { alter: (r) => ({ ...(r as object), accessList: [] }) })
const call = (params: unknown[], id: number | string = 1) => ({ jsonrpc: '2.0', id, method: 'eth_call', params })
const truth = async (params: unknown[]) => {
  const r = await anvil.rpc('eth_call', params)
  delete r.id
  return r
}
const data = (functionName: 'balanceOf' | 'totalSupply' | 'transfer', args: unknown[] = []) =>
  encodeFunctionData({ abi: erc20Abi, functionName, args } as never)
const calls: [string, unknown][] = [
  ['totalSupply', { to: busy.token, data: data('totalSupply') }],
  ['balanceOf the owner', { to: busy.token, data: data('balanceOf', [busy.eoa]) }],
  ['balanceOf the delegated account', { to: busy.token, data: data('balanceOf', [busy.delegated]) }],
  ['a transfer beyond the balance: a revert', { from: busy.delegated, to: busy.token, data: data('transfer', [busy.eoa, 10n ** 30n]) }],
  ['a call to an account without code', { to: busy.absent, data: '0x1234' }],
  ['the log emitter', { to: busy.emitter, data: '0xabcdef' }],
]

t.test('verify off: the liar’s results reach the client', async (t) => {
  const r = await rpc(tg.url('eth-2'), call([calls[0][1], 'latest']), { apiKey })
  t.not(r.json.result, (await truth([calls[0][1], 'latest'])).result, 'altered')
})

t.test('verify calls: every call answers what anvil answers, run on proven state', async (t) => {
  for (const block of ['latest', `0x${(busy.head - 1).toString(16)}`]) {
    for (const [what, tx] of calls) {
      const r = await rpc(tg.url('eth-1'), call([tx, block], 'c'), { apiKey })
      t.same(r.json, { ...(await truth([tx, block])), id: 'c' }, `${what} at ${block}`)
      t.ok(r.headers.get('x-tollgate-verified'), `${what}: verified`)
    }
  }
  t.ok(
    (await metric(tg.gateway.admin, 'tollgate_verify_failed_total', { network: 'eth-1', node: 'liar', check: 'CALL_RESULT' }))! > 0,
    'the liar’s results counted',
  )
})

t.test('a call without `to` (creation code, as deployless calls send it) runs each round on the state as proven', async (t) => {
  // NUMBER PUSH1 0 MSTORE PUSH1 32 PUSH1 0 RETURN. A creation raises the caller's nonce and makes an
  // account: a round that kept them made the next round create elsewhere, round after round, until
  // the run gave up (ANSWER_UNVERIFIED) where anvil answers.
  const initcode = '0x4360005260206000f3'
  for (const block of ['latest', `0x${(busy.head - 1).toString(16)}`]) {
    const r = await rpc(tg.url('eth-1'), call([{ data: initcode }, block], 'p'), { apiKey })
    t.same(r.json, { ...(await truth([{ data: initcode }, block])), id: 'p' }, `the block number at ${block}`)
    t.ok(r.headers.get('x-tollgate-verified'), `verified at ${block}`)
  }
})

t.test('BLOCKHASH: a call that reads block hashes is run with the hashes linked to the trusted header', async (t) => {
  // Init code (a call without `to` runs it): returns blockhash(number - 1), blockhash(number - 5)
  // and blockhash(number - 3), each `NUMBER PUSH1 k SWAP1 SUB BLOCKHASH PUSH1 at MSTORE`.
  const initcode = '0x43600190034060005243600590034060205243600390034060405260606000f3'
  // The fastest node's headers do not hash to what they claim: the walk down asks the others.
  liar.set('eth_getBlockByNumber', { alter: (r) => (r !== null && typeof r === 'object' ? { ...r, gasUsed: '0x1' } : r) })
  t.teardown(() => liar.clear('eth_getBlockByNumber'))
  for (const n of [busy.head, busy.head - 10]) {
    const block = `0x${n.toString(16)}`
    const truth = await anvil.rpc('eth_call', [{ data: initcode }, block])
    const hashes = await Promise.all([1, 5, 3].map(async (k) => (await anvil.rpc('eth_getBlockByNumber', [`0x${(n - k).toString(16)}`, false])).result.hash))
    t.equal(truth.result, `0x${hashes.map((h: string) => h.slice(2)).join('')}`, `anvil's own answer at ${block} is the three hashes`)
    const r = await rpc(tg.url('eth-1'), call([{ data: initcode }, block], 'b'), { apiKey })
    t.same(r.json, { jsonrpc: '2.0', id: 'b', result: truth.result }, `the three hashes at ${block}`)
    t.ok(r.headers.get('x-tollgate-verified'), `verified at ${block}`)
  }
})
