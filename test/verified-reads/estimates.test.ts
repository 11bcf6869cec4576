import t from 'tap'
import { encodeFunctionData, erc20Abi } from 'viem'
import { tokenInitCode } from '../helpers/contracts.js'
import { rpc } from '../helpers/gateway.js'
import { lyingNodes } from '../helpers/lying-nodes.js'
import { metric } from '../helpers/metrics.js'

// Issue 40, item 5: with `verify: "calls"`, a node's eth_estimateGas is handed on only when the
// transaction, run by the gateway on proven state, succeeds with that much gas and fails with 2%
// less. One real anvil behind three proxies: two honest and slow, one fast that shades its
// estimates (down, so that the client's transaction would run out of gas; or up).

const { anvil, busy, liar, tg, apiKey } = await lyingNodes(t, 'calls')
let shade: (gas: bigint) => bigint = (gas) => gas - 1_000n
liar.set('eth_estimateGas', { alter: (r) => (typeof r === 'string' ? `0x${shade(BigInt(r)).toString(16)}` : r) })
const estimate = (params: unknown[], id: number | string = 1) => ({ jsonrpc: '2.0', id, method: 'eth_estimateGas', params })
const truth = async (params: unknown[]) => {
  const r = await anvil.rpc('eth_estimateGas', params)
  delete r.id
  return r
}
const transfer = (to: string, amount: bigint) => encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [to as `0x${string}`, amount] })
const txs: [string, Record<string, unknown>][] = [
  ['a plain transfer of value', { from: busy.eoa, to: busy.absent, value: '0x1' }],
  ['a token transfer to a new holder (a slot written from zero)', { from: busy.eoa, to: busy.token, data: transfer(busy.absent, 1n) }],
  ['a token transfer of a whole balance (a slot cleared: a refund)', { from: busy.delegated, to: busy.token, data: transfer(busy.eoa, 5n) }],
  ['a call that logs its calldata', { from: busy.eoa, to: busy.emitter, data: '0xabcdef' }],
  ['4 KB of calldata (the calldata floor)', { from: busy.eoa, to: busy.emitter, data: `0x${'ab'.repeat(4096)}` }],
  ['a contract creation', { from: busy.eoa, data: tokenInitCode(busy.eoa) }],
]

t.test('verify off: the liar’s estimate reaches the client', async (t) => {
  const r = await rpc(tg.url('eth-2'), estimate([txs[1]![1], 'latest']), { apiKey })
  const honest = (await truth([txs[1]![1], 'latest'])).result
  t.equal(BigInt(r.json.result), BigInt(honest) - 1_000n, 'shaded by 1,000 gas: the transaction would run out of gas')
})

for (const [label, shaded] of [
  ['shaded down', (gas: bigint) => gas - 1_000n],
  ['inflated by half', (gas: bigint) => gas + gas / 2n],
] as const) {
  t.test(`verify calls, a liar whose estimates are ${label}: every estimate is anvil’s own`, async (t) => {
    shade = shaded
    for (const block of ['latest', `0x${(busy.head - 1).toString(16)}`]) {
      for (const [what, tx] of txs) {
        const r = await rpc(tg.url('eth-1'), estimate([tx, block], 'e'), { apiKey })
        t.same(r.json, { ...(await truth([tx, block])), id: 'e' }, `${what} at ${block}`)
        t.ok(r.headers.get('x-tollgate-verified'), `${what}: verified`)
      }
    }
  })
}

t.test('a revert is the node’s error, handed on as it is', async (t) => {
  const tx = { from: busy.delegated, to: busy.token, data: transfer(busy.eoa, 10n ** 30n) }
  const r = await rpc(tg.url('eth-1'), estimate([tx, 'latest'], 3), { apiKey })
  const honest = await truth([tx, 'latest'])
  t.ok(honest.error, 'anvil refuses it')
  t.same(r.json, { ...honest, id: 3 }, 'the same error')
  t.equal(r.headers.get('x-tollgate-verified'), null, 'not marked verified')
})

t.test('the liar’s estimates are counted as failed checks', async (t) => {
  const failed = await metric(tg.gateway.admin, 'tollgate_verify_failed_total', { network: 'eth-1', node: 'liar', check: 'GAS_ESTIMATE' })
  t.ok(failed !== undefined && failed > 0, `counted (${failed})`)
})
