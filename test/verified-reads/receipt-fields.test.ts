import t from 'tap'
import type { Hex } from 'viem'
import { startAnvil } from '../../harness/anvil.js'
import { anvilAccount, chainAt, deployRuntime, revertingCode } from '../helpers/contracts.js'
import { startFaultProxy } from '../helpers/fault-proxy.js'
import { rpc, startTestGateway } from '../helpers/gateway.js'
import { metric } from '../helpers/metrics.js'

// A receipt's transactionHash, from, to and contractAddress are in no root: receiptsRoot commits
// status, gas, bloom and logs only. One block of two transactions, the first reverted, the second
// a success; a liar (listed first, so asked first) swaps the two receipts' transactionHash in
// eth_getBlockReceipts. Every root still matches: without the block's transactions the reverted
// transaction's receipt read as the success, marked verified.

const anvil = await startAnvil()
t.teardown(() => anvil.stop())
const chain = chainAt(anvil.url)
const reverter = await deployRuntime(chain, anvilAccount(0), revertingCode('no'))
await anvil.rpc('evm_setAutomine', [false])
const send = async (from: number, tx: Record<string, string>): Promise<Hex> =>
  (await anvil.rpc('eth_sendTransaction', [{ from: anvilAccount(from).address, gas: '0x30000', ...tx }])).result
const reverted = await send(1, { to: reverter, data: '0x01' })
const paid = await send(2, { to: anvilAccount(4).address, value: '0x3e8' })
await anvil.rpc('evm_mine')
await anvil.rpc('evm_setAutomine', [true])
await anvil.rpc('anvil_mine', ['0x2'])
const truth = async (method: string, params: unknown[]) => (await anvil.rpc(method, params)).result
const block = await truth('eth_getBlockByHash', [(await truth('eth_getTransactionReceipt', [reverted])).blockHash, false])

const [liar, honest] = await Promise.all([startFaultProxy(anvil), startFaultProxy(anvil)])
t.teardown(() => Promise.all([liar.close(), honest.close()]))
// The honest node slower, so that the pool keeps choosing the liar first.
honest.set('*', { delayMs: 150 })
type Receipt = { transactionHash: Hex; logs: { transactionHash: Hex }[] }
liar.set('eth_getBlockReceipts', {
  alter: (rs) => {
    const receipts = rs as Receipt[] | null
    if (receipts === null || receipts.length !== 2) return rs
    const swapped = (r: Receipt, hash: Hex): Receipt => ({ ...r, transactionHash: hash, logs: r.logs.map((l) => ({ ...l, transactionHash: hash })) })
    return [swapped(receipts[0]!, receipts[1]!.transactionHash), swapped(receipts[1]!, receipts[0]!.transactionHash)]
  },
})
const tg = await startTestGateway(t, {
  networks: {
    'eth-1': {
      chainId: 31337,
      verify: 'reads',
      upstreams: [
        { url: liar.url, name: 'liar', kind: 'full' },
        { url: honest.url, name: 'honest', kind: 'full' },
      ],
    },
  },
  config: { diagnostics: { responseHeaders: true }, cache: { enabled: false } },
})
const { apiKey } = await tg.createKey('tier-3')
const call = (method: string, params: unknown[]) => ({ jsonrpc: '2.0', id: 1, method, params })

t.test('a reverted transaction’s receipt is its own, not the swapped success', async (t) => {
  t.same(block.transactions, [reverted, paid], 'one block, the reverted transaction first')
  t.equal((await truth('eth_getTransactionReceipt', [reverted])).status, '0x0', 'anvil: reverted')
  for (const hash of [reverted, paid]) {
    const r = await rpc(tg.url('eth-1'), call('eth_getTransactionReceipt', [hash]), { apiKey })
    t.same(r.json.result, await truth('eth_getTransactionReceipt', [hash]), `receipt of ${hash}: anvil's`)
    t.equal(r.headers.get('x-tollgate-verified'), block.hash)
  }
  const all = await rpc(tg.url('eth-1'), call('eth_getBlockReceipts', [block.hash]), { apiKey })
  t.same(all.json.result, await truth('eth_getBlockReceipts', [block.hash]), "the block's receipts: anvil's")
  t.ok(liar.received('eth_getBlockReceipts') > 0, 'the liar was asked')
  t.ok((await metric(tg.gateway.admin, 'tollgate_verify_failed_total', { network: 'eth-1', check: 'RECEIPT_PLACE' }))! > 0, 'the swap failed RECEIPT_PLACE')
})
