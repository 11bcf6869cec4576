import t from 'tap'
import { type Hex, padHex } from 'viem'
import { startAnvil } from '../../harness/anvil.js'
import { PROVEN_KEPT_BYTES } from '../../src/verified-reads/state-reads.js'
import { startFaultProxy } from '../helpers/fault-proxy.js'
import { rpc, startTestGateway } from '../helpers/gateway.js'
import { metric } from '../helpers/metrics.js'

// Proofs checked once are kept for their block; counted in number alone, 12 eth_getProof answers of
// 4,000 slots (11.5 MB each) were all kept. Here: a contract with a deep storage trie (1,500 slots
// set), many distinct proofs of 256 slots each at one block, and the gateway's own count of kept
// bytes read from /metrics after each; then the bound on the slots of one verified eth_getProof.

const anvil = await startAnvil()
t.teardown(() => anvil.stop())
const holder: Hex = '0x00000000000000000000000000000000000c0ffe'
const word = (n: number): Hex => padHex(`0x${n.toString(16)}`, { size: 32 })
await anvil.rpc('anvil_setCode', [holder, '0x00'])
for (let from = 0; from < 1_500; from += 250) {
  const batch = Array.from({ length: 250 }, (_, i) => ({
    jsonrpc: '2.0',
    id: from + i,
    method: 'anvil_setStorageAt',
    params: [holder, word(from + i), word(from + i + 1)],
  }))
  await fetch(anvil.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(batch) })
}
await anvil.rpc('anvil_mine', ['0x2'])
const head = (await anvil.rpc('eth_blockNumber', [])).result as Hex

const node = await startFaultProxy(anvil)
t.teardown(() => node.close())
const tg = await startTestGateway(t, {
  networks: { 'eth-1': { chainId: 31337, verify: 'reads', upstreams: [{ url: node.url, name: 'a', kind: 'full' }] } },
  config: { cache: { enabled: false } },
})
const { apiKey } = await tg.createKey('tier-3')
const slotsFrom = (first: number, n = 256): Hex[] => Array.from({ length: n }, (_, i) => word(first + i))
const proof = (slots: Hex[]) => ({ jsonrpc: '2.0', id: 1, method: 'eth_getProof', params: [holder, slots, head] })
const kept = () => metric(tg.gateway.admin, 'tollgate_verify_kept_proof_bytes', { network: 'eth-1' })

t.test('kept proofs stay within their byte budget, the oldest dropped first', async (t) => {
  let answered = 0
  let calls = 0
  // Twice the budget of distinct proofs, all at one block (each a key of its own).
  while (answered < 2 * PROVEN_KEPT_BYTES) {
    const r = await rpc(tg.url('eth-1'), proof(slotsFrom(calls * 256)), { apiKey })
    t.equal(r.json.result?.storageProof?.length, 256, `proof ${calls}: answered`)
    answered += JSON.stringify(r.json.result).length
    calls++
    const bytes = (await kept())!
    if (bytes > PROVEN_KEPT_BYTES) t.fail(`after proof ${calls}: ${bytes} bytes kept, over ${PROVEN_KEPT_BYTES}`)
  }
  t.ok((await kept())! > PROVEN_KEPT_BYTES / 2, `${await kept()} bytes kept after ${calls} proofs of ${answered} bytes`)
  const asked = node.received('eth_getProof')
  await rpc(tg.url('eth-1'), proof(slotsFrom((calls - 1) * 256)), { apiKey })
  t.equal(node.received('eth_getProof'), asked, 'the newest proof is answered from what was kept')
  await rpc(tg.url('eth-1'), proof(slotsFrom(0)), { apiKey })
  t.equal(node.received('eth_getProof'), asked + 1, 'the oldest was dropped: asked of the node again')
})

t.test('a verified eth_getProof of more than 256 slots is refused before any node is asked', async (t) => {
  const asked = node.received('eth_getProof')
  const r = await rpc(tg.url('eth-1'), proof(slotsFrom(5_000, 257)), { apiKey })
  t.equal(r.status, 400)
  t.equal(r.json.error?.code, -32028)
  t.match(r.json.error?.message, /257 storage slots; at most 256 .*several calls/)
  t.equal(node.received('eth_getProof'), asked, 'no node asked')
  t.equal(await metric(tg.gateway.admin, 'tollgate_verified_calls_total', { network: 'eth-1', method: 'eth_getProof', outcome: 'refused' }), 1)
})
