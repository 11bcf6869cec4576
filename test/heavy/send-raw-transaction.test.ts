import t from 'tap'
import { keccak256 } from 'viem/utils'
import { startAnvil } from '../../harness/anvil.js'
import { rpc, startTestGateway } from '../helpers/gateway.js'
import { metricNow } from '../helpers/metrics.js'
import { startFaultProxy } from '../helpers/fault-proxy.js'
import { startFlakyProxy } from '../helpers/flaky-proxy.js'
import { waitFor } from '../helpers/eventually.js'

// eth_sendRawTransaction through a node whose answers get lost: every client gets its
// transaction's hash, and the chain holds each transaction once.
const anvil = await startAnvil()
const proxy = await startFlakyProxy(anvil)
// The other way to the chain is slower by 30 ms a call, so that the flaky link is the best node
// and takes the first transaction: with two equal nodes, which one the gateway chose depended on
// their measured latencies, and a fresh-clone run once sent all four to the other node (0 cuts).
const slower = await startFaultProxy(anvil)
slower.set('*', { delayMs: 30 })
t.teardown(async () => {
  await proxy.close()
  await slower.close()
  await anvil.stop()
})
// Two ways to the same chain: through the flaky link, and through the slower one. Failures must
// not take the flaky node out here (the test wants it asked), and nothing polls after start.
const tg = await startTestGateway(t, {
  networks: {
    'eth-1': {
      chainId: 31337,
      upstreams: [
        { url: proxy.url, kind: 'full', name: 'flaky' },
        { url: slower.url, kind: 'full', name: 'direct' },
      ],
    },
  },
  quiet: true,
  config: { health: { failureThreshold: 100, maxErrorRate: 1 } },
})
const { apiKey } = await tg.createKey('tier-3')
const [from, to] = (await anvil.rpc('eth_accounts')).result as string[]

async function sign(nonce: number): Promise<string> {
  const tx = { from, to, value: '0x1', nonce: `0x${nonce.toString(16)}`, gas: '0x5208', gasPrice: '0x77359400' }
  return (await anvil.rpc('eth_signTransaction', [tx])).result
}
const send = (raw: string, id: number) => rpc(tg.url('eth-1'), { jsonrpc: '2.0', id, method: 'eth_sendRawTransaction', params: [raw] }, { apiKey })

t.test('answers lost on the way back: each client still gets its hash, each transaction is on the chain once', async (t) => {
  proxy.mode = 'cut'
  const start = parseInt((await anvil.rpc('eth_getTransactionCount', [from, 'latest'])).result, 16)
  const hashes: string[] = []
  for (let i = 0; i < 4; i++) {
    const raw = await sign(start + i)
    const res = await send(raw, i)
    t.equal(res.status, 200)
    t.equal(res.json.result, keccak256(raw as `0x${string}`), `transaction ${i}: its hash`)
    hashes.push(res.json.result)
  }
  t.ok(proxy.cuts >= 1, `the flaky link lost ${proxy.cuts} answers`)
  // When the client has its hash, the node holds the transaction: in its pool or mined. Its
  // 'pending' nonce counts both. (The 'latest' count was read here once, and was 3 on a loaded
  // machine: anvil answers eth_sendRawTransaction when the transaction is in its pool, and mines
  // it a moment later, through the gateway or not.)
  const pending = parseInt((await anvil.rpc('eth_getTransactionCount', [from, 'pending'])).result, 16)
  t.equal(pending - start, 4, 'four transactions held by the node when the last hash came back, no more, no fewer')
  const receipt = async (hash: string) => (await anvil.rpc('eth_getTransactionReceipt', [hash])).result
  // A bound on a real event (mining), not a timing assertion.
  await waitFor(async () => (await Promise.all(hashes.map(receipt))).every(Boolean), 'the four transactions to be mined')
  for (const hash of hashes) t.ok(await receipt(hash), `mined: ${hash}`)
  const count = parseInt((await anvil.rpc('eth_getTransactionCount', [from, 'latest'])).result, 16)
  t.equal(count - start, 4, 'four transactions on the chain, no more, no fewer')
  t.ok((await metricNow(tg.gateway.admin, 'tollgate_tx_recovered_total')) >= 1, 'the gateway recovered the lost answers')
  proxy.mode = 'pass'
})

t.test('a transaction sent again gets its hash, not "already known" or "nonce too low"', async (t) => {
  const nonce = parseInt((await anvil.rpc('eth_getTransactionCount', [from, 'latest'])).result, 16)
  const raw = await sign(nonce)
  const hash = keccak256(raw as `0x${string}`)
  t.equal((await send(raw, 1)).json.result, hash)
  const direct = await anvil.rpc('eth_sendRawTransaction', [raw])
  t.match(direct.error?.message, /nonce too low|already/, `the node alone says: ${direct.error?.message}`)
  const again = await send(raw, 2)
  t.equal(again.json.result, hash, 'through the gateway: the hash')
  t.equal(again.json.id, 2)

  // Pending (not mined yet): the node says "already imported".
  await anvil.rpc('evm_setAutomine', [false])
  t.teardown(() => anvil.rpc('evm_setAutomine', [true]))
  const pendingRaw = await sign(nonce + 1)
  t.equal((await send(pendingRaw, 3)).json.result, keccak256(pendingRaw as `0x${string}`))
  t.equal((await send(pendingRaw, 4)).json.result, keccak256(pendingRaw as `0x${string}`), 'pending and sent again: the hash')
})

t.test('another transaction with a used nonce keeps the node error', async (t) => {
  await anvil.rpc('evm_mine')
  const nonce = parseInt((await anvil.rpc('eth_getTransactionCount', [from, 'latest'])).result, 16)
  const tx = { from, to, value: '0x2', nonce: `0x${(nonce - 1).toString(16)}`, gas: '0x5208', gasPrice: '0x77359400' }
  const raw = (await anvil.rpc('eth_signTransaction', [tx])).result
  const res = await send(raw, 5)
  t.equal(res.json.error?.message, (await anvil.rpc('eth_sendRawTransaction', [raw])).error?.message, "the node's own error")
})
