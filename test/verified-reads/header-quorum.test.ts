import t from 'tap'
import { startAnvil } from '../../harness/anvil.js'
import { within } from '../helpers/eventually.js'
import { startFaultProxy } from '../helpers/fault-proxy.js'
import { forgeChain } from '../helpers/forged-chain.js'
import { rpc, startTestGateway } from '../helpers/gateway.js'
import { metric } from '../helpers/metrics.js'

// The header quorum is a majority of every configured node, not of the healthy ones. Two honest
// nodes and a liar that serves a forged head (it hashes; only agreement can tell it from the
// chain's): while the honest nodes serve, the chain's head is the trusted one; once both are out
// (here their proxies closed: the same as sitting out for disputes a liar provoked), the liar is
// all that is left, and a quorum of the healthy nodes would be the liar alone: its head would be
// trusted and served as verified. Reads must fail HEADER_AGREEMENT instead.

const anvil = await startAnvil()
t.teardown(() => anvil.stop())
await anvil.rpc('anvil_mine', ['0x46'])
const [honest, alsoHonest, liar] = await Promise.all([0, 1, 2].map(() => startFaultProxy(anvil)))
t.teardown(() => Promise.all([honest, alsoHonest, liar].map((p) => p!.close())))
const head = Number((await anvil.rpc('eth_blockNumber')).result)
const forged = await forgeChain(anvil, liar!, head, head)

const tg = await startTestGateway(t, {
  networks: {
    'eth-1': {
      chainId: 31337,
      verify: 'reads',
      upstreams: [
        { url: honest!.url, name: 'honest', kind: 'full' },
        { url: alsoHonest!.url, name: 'also-honest', kind: 'full' },
        { url: liar!.url, name: 'liar', kind: 'full' },
      ],
    },
  },
  config: { diagnostics: { responseHeaders: true }, cache: { enabled: false }, health: { pollMs: 200, cooldownMs: 60_000, failureThreshold: 2 } },
})
const { apiKey } = await tg.createKey('tier-3')
const [who] = (await anvil.rpc('eth_accounts')).result as string[]
const block = (n: number | 'latest') => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'eth_getBlockByNumber',
  params: [typeof n === 'number' ? `0x${n.toString(16)}` : n, false],
})
const balance = (n: number) => ({ jsonrpc: '2.0', id: 2, method: 'eth_getBalance', params: [who, `0x${n.toString(16)}`] })

t.test('with the honest nodes serving, the chain’s head is the trusted one', async (t) => {
  t.not(forged.hashes.get(head), forged.honest.get(head), 'the liar’s head is another block')
  const r = await rpc(tg.url('eth-1'), block('latest'), { apiKey })
  t.equal(r.json.result?.hash, forged.honest.get(head), 'the honest head')
  t.equal(r.headers.get('x-tollgate-verified'), forged.honest.get(head), 'verified at it')
})

t.test('with both honest nodes out, the liar alone is no quorum: reads are refused, never its head', async (t) => {
  await Promise.all([honest!.close(), alsoHonest!.close()])
  for (const node of ['honest', 'also-honest']) {
    t.ok(
      await within(20_000, async () => (await metric(tg.gateway.admin, 'tollgate_upstream_out', { network: 'eth-1', node, reason: 'failures' })) === 1),
      `${node} is out`,
    )
  }
  // A new block, which the liar forges too: what was agreed before (kept for a second) plays no part.
  await anvil.rpc('anvil_mine', ['0x1'])
  const next = await forgeChain(anvil, liar!, head + 1, head + 1)
  forged.hashes.set(head + 1, next.hashes.get(head + 1)!)
  // Another key, as another tenant would read.
  const other = (await tg.createKey('tier-3')).apiKey
  for (const [what, call] of [
    ['the new block', block(head + 1)],
    ['a balance at its number', balance(head + 1)],
  ] as const) {
    const r = await rpc(tg.url('eth-1'), call, { apiKey: other })
    t.not(r.headers.get('x-tollgate-verified'), forged.hashes.get(head + 1), `${what}: never verified at the liar’s head`)
    t.not(r.json.result?.hash, forged.hashes.get(head + 1), `${what}: never the liar’s block`)
    t.equal(r.json.error?.code, -32026, `${what}: ANSWER_UNVERIFIED (${JSON.stringify(r.json).slice(0, 200)})`)
    t.match(r.json.error?.message, /HEADER_AGREEMENT/, `${what}: the check named`)
  }
})
