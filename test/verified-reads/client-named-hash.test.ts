import t from 'tap'
import { startAnvil } from '../../harness/anvil.js'
import { startFaultProxy } from '../helpers/fault-proxy.js'
import { forgeChain } from '../helpers/forged-chain.js'
import { rpc, startTestGateway } from '../helpers/gateway.js'

// A block the client names by hash is looked up, never made trusted by being named. A liar (the
// fastest of three nodes, and listed first) serves a forged chain from block 20 to 24: each header hashes, each links
// to the one below, only agreement tells it from the chain's. One key names the forged block 24 by
// hash (eth_getLogs by blockHash, and as toBlock over 20..24, eth_getBlockByHash); then another
// key reads blocks 20 to 24 by number. Were a named hash trusted because its header hashes, and
// the headers linked below it kept by number, the other key's reads at 20..23 (settled blocks,
// kept for as long as they are cached) would be proven against the liar's headers.

const anvil = await startAnvil()
t.teardown(() => anvil.stop())
// Blocks 20..24 settled (64 and more below the head): a kept header there is not asked again.
await anvil.rpc('anvil_mine', ['0x96'])
const [honest, alsoHonest, liar] = await Promise.all([0, 1, 2].map(() => startFaultProxy(anvil)))
t.teardown(() => Promise.all([honest, alsoHonest, liar].map((p) => p!.close())))
honest!.set('*', { delayMs: 150 })
alsoHonest!.set('*', { delayMs: 150 })
const forged = await forgeChain(anvil, liar!, 20, 24)
const forgedHashes = new Set(forged.hashes.values())
const F = forged.hashes.get(24)!

const tg = await startTestGateway(t, {
  networks: {
    'eth-1': {
      chainId: 31337,
      verify: 'reads',
      upstreams: [
        // The liar listed first: a header asked by hash is asked of the nodes in this order.
        { url: liar!.url, name: 'liar', kind: 'full' },
        { url: honest!.url, name: 'honest', kind: 'full' },
        { url: alsoHonest!.url, name: 'also-honest', kind: 'full' },
      ],
    },
  },
  config: { diagnostics: { responseHeaders: true }, cache: { enabled: false } },
})
const [a, b] = [(await tg.createKey('tier-3')).apiKey, (await tg.createKey('tier-3')).apiKey]
const [who] = (await anvil.rpc('eth_accounts')).result as string[]
const call = (method: string, params: unknown[]) => ({ jsonrpc: '2.0', id: 1, method, params })
const hex = (n: number) => `0x${n.toString(16)}`

t.test('the forged block, named by hash, is refused, never served as verified', async (t) => {
  t.equal(forgedHashes.size, 5, 'five forged blocks')
  for (const [what, req] of [
    ['eth_getLogs by blockHash', call('eth_getLogs', [{ blockHash: F }])],
    ['eth_getLogs with toBlock by hash', call('eth_getLogs', [{ fromBlock: hex(20), toBlock: { blockHash: F } }])],
    ['eth_getBlockByHash', call('eth_getBlockByHash', [F, false])],
    ['eth_getBalance at the hash', call('eth_getBalance', [who, { blockHash: F }])],
  ] as const) {
    const r = await rpc(tg.url('eth-1'), req, { apiKey: a })
    t.notOk(forgedHashes.has(r.headers.get('x-tollgate-verified') ?? ''), `${what}: not verified at a forged block`)
    t.ok(r.json.error !== undefined, `${what}: refused (${JSON.stringify(r.json).slice(0, 240)})`)
  }
})

t.test('another key reads those numbers: the chain’s blocks, verified at the chain’s hashes', async (t) => {
  for (let n = 20; n <= 24; n++) {
    const block = await rpc(tg.url('eth-1'), call('eth_getBlockByNumber', [hex(n), false]), { apiKey: b })
    t.equal(block.json.result?.hash, forged.honest.get(n), `block ${n}: the chain’s (${JSON.stringify(block.json).slice(0, 160)})`)
    t.equal(block.headers.get('x-tollgate-verified'), forged.honest.get(n), `block ${n}: verified at the chain’s hash`)
    const balance = await rpc(tg.url('eth-1'), call('eth_getBalance', [who, hex(n)]), { apiKey: b })
    t.equal(balance.json.result, (await anvil.rpc('eth_getBalance', [who, hex(n)])).result, `balance at ${n}: the chain’s`)
    t.equal(balance.headers.get('x-tollgate-verified'), forged.honest.get(n), `balance at ${n}: verified at the chain’s hash`)
  }
})

t.test('the chain’s own block named by hash is answered, verified at it', async (t) => {
  const hash = forged.honest.get(24)!
  for (const [what, req] of [
    ['eth_getLogs by blockHash', call('eth_getLogs', [{ blockHash: hash }])],
    ['eth_getLogs with toBlock by hash', call('eth_getLogs', [{ fromBlock: hex(20), toBlock: { blockHash: hash } }])],
    ['eth_getBlockByHash', call('eth_getBlockByHash', [hash, false])],
    ['eth_getBalance at the hash', call('eth_getBalance', [who, { blockHash: hash }])],
  ] as const) {
    const r = await rpc(tg.url('eth-1'), req, { apiKey: a })
    // toBlock as an EIP-1898 object may be refused before verification (JSON-RPC has blockHash for it).
    if (what === 'eth_getLogs with toBlock by hash' && r.json.error !== undefined) continue
    t.equal(r.headers.get('x-tollgate-verified'), hash, `${what}: verified at the chain’s block (${JSON.stringify(r.json).slice(0, 200)})`)
  }
})
