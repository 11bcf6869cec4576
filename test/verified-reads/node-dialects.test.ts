import t from 'tap'
import type { Hex } from 'viem'
import { startAnvil } from '../../harness/anvil.js'
import { anvilAccount } from '../helpers/contracts.js'
import { startFaultProxy } from '../helpers/fault-proxy.js'
import { rpc, startTestGateway } from '../helpers/gateway.js'
import { metricsPage, readMetric } from '../helpers/metrics.js'

// A node that lacks what a check needs is no liar. Hardhat's EDR and Ganache serve no
// eth_getBlockReceipts (EDR -32004, Ganache -32700), and Ganache refuses eth_getProof and
// eth_getCode with a `{blockHash}` block (-32700 "Cannot wrap a "object" as a json-rpc type"). One
// real anvil behind proxies that answer as those nodes do: the receipts were a failed
// RECEIPTS_ROOT check (a dispute, ANSWER_UNVERIFIED), and Ganache's error became the answer to
// eth_getBalance and the rest.

const anvil = await startAnvil()
t.teardown(() => anvil.stop())
await anvil.rpc('anvil_mine', ['0x4'])
const holder: Hex = '0x00000000000000000000000000000000000c0de5'
await anvil.rpc('anvil_setCode', [holder, '0x6001600055'])
await anvil.rpc('anvil_setStorageAt', [holder, `0x${'0'.repeat(63)}1`, `0x${'0'.repeat(62)}2a`])
await anvil.rpc('evm_setAutomine', [false])
const sent: Hex[] = []
for (const i of [1, 2, 3]) {
  const tx = { from: anvilAccount(i).address, to: anvilAccount(4).address, value: '0x3e8', gas: '0x5208' }
  sent.push((await anvil.rpc('eth_sendTransaction', [tx])).result)
}
await anvil.rpc('evm_mine')
await anvil.rpc('evm_setAutomine', [true])
await anvil.rpc('anvil_mine', ['0x2'])
const truth = async (method: string, params: unknown[]) => (await anvil.rpc(method, params)).result
const block = await truth('eth_getBlockByHash', [(await truth('eth_getTransactionReceipt', [sent[0]])).blockHash, false])
const head: Hex = await truth('eth_blockNumber', [])

const byHash = (call: { params: unknown }) => {
  const params = call.params as unknown[]
  const last = params[params.length - 1]
  return typeof last === 'object' && last !== null && 'blockHash' in last
}
const GANACHE_CANNOT_WRAP = { code: -32700, message: 'Cannot wrap a "object" as a json-rpc type' }
const [edr, ganache, liar, erring, ganacheLiar] = await Promise.all([0, 1, 2, 3, 4].map(() => startFaultProxy(anvil)))
t.teardown(() => Promise.all([edr, ganache, liar, erring, ganacheLiar].map((p) => p!.close())))
edr!.set('eth_getBlockReceipts', { answerError: { code: -32004, message: 'Method not supported' } })
ganache!.set('eth_getBlockReceipts', { answerError: { code: -32700, message: 'Method eth_getBlockReceipts not supported' } })
for (const m of ['eth_getProof', 'eth_getCode']) ganache!.set(m, { answerError: GANACHE_CANNOT_WRAP, onlyWhen: byHash })
// Lacks eth_getBlockReceipts too, is the fastest and lies in each receipt it gives: the receipts
// proven one by one are still checked against the root.
liar!.set('eth_getBlockReceipts', { refuse: true })
liar!.set('eth_getTransactionReceipt', { alter: (r) => (r === null ? r : { ...(r as object), status: '0x0' }) })
edr!.set('*', { delayMs: 100 })
// Answers every block by hash with its error (Ganache's -32700 for a block it cannot find).
const NOT_FOUND = { code: -32700, message: 'header not found' }
erring!.set('eth_getBlockByHash', { answerError: NOT_FOUND })
// Refuses a {blockHash} block as Ganache does, and lies about the balance in its proofs by number:
// its block at that number is the trusted one, so the proof's failure is its own.
ganacheLiar!.set('eth_getProof', { answerError: GANACHE_CANNOT_WRAP, onlyWhen: byHash })
ganacheLiar!.set('eth_*', {
  alter: (r, c) => (c.method === 'eth_getProof' ? { ...(r as object), balance: `0x${(BigInt((r as { balance: string }).balance) + 1n).toString(16)}` } : r),
})

const tg = await startTestGateway(t, {
  networks: {
    'eth-1': {
      chainId: 31337,
      verify: 'reads',
      upstreams: [
        { url: ganache!.url, name: 'ganache', kind: 'full' },
        { url: edr!.url, name: 'edr', kind: 'full' },
      ],
    },
    'eth-2': { chainId: 31337, verify: 'reads', upstreams: [{ url: ganache!.url, name: 'ganache', kind: 'full' }] },
    'eth-4': {
      chainId: 31337,
      verify: 'reads',
      upstreams: [
        { url: erring!.url, name: 'erring', kind: 'full' },
        { url: edr!.url, name: 'edr', kind: 'full' },
      ],
    },
    'eth-5': { chainId: 31337, verify: 'reads', upstreams: [{ url: erring!.url, name: 'erring', kind: 'full' }] },
    'eth-6': {
      chainId: 31337,
      verify: 'reads',
      upstreams: [
        { url: ganacheLiar!.url, name: 'ganache-liar', kind: 'full' },
        { url: edr!.url, name: 'edr', kind: 'full' },
      ],
    },
    'eth-3': {
      chainId: 31337,
      verify: 'reads',
      upstreams: [
        { url: liar!.url, name: 'liar', kind: 'full' },
        { url: edr!.url, name: 'edr', kind: 'full' },
      ],
    },
  },
  config: { diagnostics: { responseHeaders: true }, cache: { enabled: false } },
})
const { apiKey } = await tg.createKey('tier-3')
const call = (method: string, params: unknown[]) => ({ jsonrpc: '2.0', id: 1, method, params })
const failedChecks = async (network: string) => {
  const page = await metricsPage(tg.gateway.admin)
  return page.split('\n').filter((l) => l.startsWith('tollgate_verify_failed_total') && l.includes(`network="${network}"`) && !l.endsWith(' 0'))
}

t.test('without eth_getBlockReceipts, receipts are proven one by one and no node is counted', async (t) => {
  for (const hash of sent) {
    const r = await rpc(tg.url('eth-1'), call('eth_getTransactionReceipt', [hash]), { apiKey })
    t.same(r.json.result, await truth('eth_getTransactionReceipt', [hash]), `receipt of ${hash}`)
    t.equal(r.headers.get('x-tollgate-verified'), block.hash)
  }
  for (const ref of [block.number, block.hash]) {
    const r = await rpc(tg.url('eth-1'), call('eth_getBlockReceipts', [ref]), { apiKey })
    t.same(r.json.result, await truth('eth_getBlockReceipts', [block.number]), `the block's receipts by ${ref}`)
    t.equal(r.headers.get('x-tollgate-verified'), block.hash)
  }
  t.same(await failedChecks('eth-1'), [], 'no failed check counted')
  const page = await metricsPage(tg.gateway.admin)
  for (const node of ['ganache', 'edr'])
    t.equal(readMetric(page, 'tollgate_upstream_out', { network: 'eth-1', node, reason: 'disputes' }), 0, `${node} not sat out`)
})

t.test('receipts proven one by one are checked against the root: a liar’s are not served', async (t) => {
  const r = await rpc(tg.url('eth-3'), call('eth_getTransactionReceipt', [sent[1]]), { apiKey })
  t.same(r.json.result, await truth('eth_getTransactionReceipt', [sent[1]]), 'the honest receipt')
  t.ok(liar!.received('eth_getTransactionReceipt') > 0, 'the liar was asked')
  const counted = await failedChecks('eth-3')
  t.ok(
    counted.some((l) => l.includes('node="liar"') && l.includes('check="RECEIPTS_ROOT"')),
    `the liar counted: ${counted.join('; ')}`,
  )
})

t.test('a node that refuses a {blockHash} block is asked by number: state reads verified, not its error', async (t) => {
  const reads: [string, unknown[]][] = [
    ['eth_getBalance', [anvilAccount(1).address]],
    ['eth_getTransactionCount', [anvilAccount(1).address]],
    ['eth_getCode', [holder]],
    ['eth_getStorageAt', [holder, '0x1']],
    ['eth_getProof', [holder, [`0x${'0'.repeat(63)}1`]]],
  ]
  for (const [method, params] of reads) {
    const r = await rpc(tg.url('eth-2'), call(method, [...params, head]), { apiKey })
    t.same(r.json, { jsonrpc: '2.0', id: 1, result: await truth(method, [...params, head]) }, `${method}: anvil's answer`)
    t.ok(r.headers.get('x-tollgate-verified'), `${method}: verified`)
  }
  t.ok(ganache!.received('eth_getProof') > ganache!.forwarded('eth_getProof'), 'the {blockHash} form was refused')
  t.same(await failedChecks('eth-2'), [], 'no failed check counted')
})

t.test('a node’s error to a call for proof material is its error, never a failed check', async (t) => {
  const r = await rpc(tg.url('eth-4'), call('eth_getBlockByNumber', [block.number, false]), { apiKey })
  t.same(r.json.result, await truth('eth_getBlockByNumber', [block.number, false]), 'the other node’s block, verified')
  t.ok(erring!.received('eth_getBlockByHash') > 0, 'the erring node was asked')
  t.same(await failedChecks('eth-4'), [], 'no failed check counted')
  const alone = await rpc(tg.url('eth-5'), call('eth_getBlockByNumber', [block.number, false]), { apiKey })
  t.same(alone.json, { jsonrpc: '2.0', id: 1, error: NOT_FOUND }, 'every node’s error: the node’s error is the answer')
  t.same(await failedChecks('eth-5'), [], 'no failed check counted')
})

t.test('asked by number, a proof that fails against the root of the node’s own block there is a failed check', async (t) => {
  const r = await rpc(tg.url('eth-6'), call('eth_getBalance', [anvilAccount(1).address, head]), { apiKey })
  t.same(r.json.result, await truth('eth_getBalance', [anvilAccount(1).address, head]), 'the honest balance')
  t.ok(ganacheLiar!.received('eth_getProof') >= 2, 'the liar was asked by hash, then by number')
  const counted = await failedChecks('eth-6')
  t.ok(
    counted.some((l) => l.includes('node="ganache-liar"') && l.includes('check="ACCOUNT_PROOF"')),
    `the liar counted: ${counted.join('; ')}`,
  )
})
