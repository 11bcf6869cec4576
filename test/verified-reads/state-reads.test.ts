import t from 'tap'
import { startAnvil } from '../../harness/anvil.js'
import { startFaultProxy } from '../helpers/fault-proxy.js'
import { rpc, startTestGateway } from '../helpers/gateway.js'
import { metric } from '../helpers/metrics.js'
import { makeBusyChain } from '../helpers/busy-chain.js'

// Issue 40, items 1, 2, 6 and 7: with `verify: "reads"`, state reads are proven against a header
// the nodes agree on. One real anvil behind five proxies (one chain, five nodes): the honest ones
// are the slowest, so the liars are asked first. On eth-2 (verify off) the same liars reach the
// client: that is what the check changes.

const anvil = await startAnvil()
t.teardown(() => anvil.stop())
// Past anvil's genesis first: its genesis header names the empty state root (docs/verified-answers.md),
// and its safe and finalized blocks are 32 and 64 below the head.
await anvil.rpc('anvil_mine', ['0x46'])
const busy = await makeBusyChain(anvil)
const [honest, stateLiar, codeLiar, alsoHonest, thirdHonest] = await Promise.all([0, 1, 2, 3, 4].map(() => startFaultProxy(anvil)))
t.teardown(() => Promise.all([honest, stateLiar, codeLiar, alsoHonest, thirdHonest].map((p) => p.close())))
for (const p of [honest, alsoHonest, thirdHonest]) p.set('*', { delayMs: 40 })
// The state liar is the fastest, so without verification its balances are the ones served.
codeLiar.set('*', { delayMs: 20 })
const plusOne = (value: unknown) => `0x${(BigInt(value as string) + 1n).toString(16)}`
const lieAboutState = () => {
  // The proof's claimed balance, nonce and storage value, and the plain reads, each one off.
  stateLiar.set('eth_getProof', {
    alter: (r) => {
      const p = r as { balance: string; nonce: string; storageProof: { value: string }[] }
      return { ...p, balance: plusOne(p.balance), storageProof: p.storageProof.map((s) => ({ ...s, value: plusOne(s.value) })) }
    },
  })
  for (const m of ['eth_getBalance', 'eth_getTransactionCount']) stateLiar.set(m, { alter: plusOne })
  stateLiar.set('eth_getStorageAt', { alter: (v) => `0x${plusOne(v).slice(2).padStart(64, '0')}` })
  codeLiar.set('eth_getCode', { alter: (code) => `${code}00` })
}
lieAboutState()

const upstreams = [
  { url: honest.url, name: 'honest', kind: 'full' as const },
  { url: stateLiar.url, name: 'state-liar', kind: 'full' as const },
  { url: codeLiar.url, name: 'code-liar', kind: 'full' as const },
  // Three honest nodes of five: with both liars sitting out for their disputes, the three left are
  // still a majority of the five configured (the header quorum counts every configured node).
  { url: alsoHonest.url, name: 'also-honest', kind: 'full' as const },
  { url: thirdHonest.url, name: 'third-honest', kind: 'full' as const },
]
const tg = await startTestGateway(t, {
  networks: {
    'eth-1': { chainId: 31337, verify: 'reads', upstreams },
    // The liar alone, unverified: what reaches a client without the check.
    'eth-2': { chainId: 31337, upstreams: [upstreams[1]!] },
  },
  // The dispute threshold is consensus's default (5 in 10 minutes); no cache, so every read is asked.
  config: { diagnostics: { responseHeaders: true }, cache: { enabled: false } },
})
const { apiKey } = await tg.createKey('tier-3')
const call = (method: string, params: unknown[], id: number | string = 1) => ({ jsonrpc: '2.0', id, method, params })
const truth = async (method: string, params: unknown[]) => (await anvil.rpc(method, params)).result
const head = await truth('eth_getBlockByNumber', ['latest', false])

const reads: [string, unknown[]][] = [
  ['eth_getBalance', [busy.eoa]],
  ['eth_getBalance', [busy.absent]],
  ['eth_getTransactionCount', [busy.eoa]],
  ['eth_getStorageAt', [busy.token, busy.slots.totalSupply]],
  ['eth_getStorageAt', [busy.token, busy.slots.unset]],
  ['eth_getCode', [busy.token]],
  ['eth_getCode', [busy.delegated]],
  ['eth_getCode', [busy.absent]],
  ['eth_getProof', [busy.token, [busy.slots.totalSupply, busy.slots.balanceOfDelegated]]],
]
const blocks: [string, unknown][] = [
  ['latest', 'latest'],
  ['a number', `0x${(busy.head - 2).toString(16)}`],
  ['a hash (EIP-1898)', { blockHash: head.hash }],
  ['a canonical hash (EIP-1898)', { blockHash: head.hash, requireCanonical: true }],
  ['a number (EIP-1898)', { blockNumber: `0x${busy.head.toString(16)}` }],
  ['safe', 'safe'],
  ['finalized', 'finalized'],
]

t.test('verify off: the liars reach the client (what the check is for)', async (t) => {
  let altered = 0
  for (let i = 0; i < 12; i++) {
    const r = await rpc(tg.url('eth-2'), call('eth_getBalance', [busy.eoa, 'latest']), { apiKey })
    if (r.json.result !== (await truth('eth_getBalance', [busy.eoa, 'latest']))) altered++
  }
  t.ok(altered > 0, `${altered} of 12 balances altered without verification`)
})

t.test('a node whose header does not hash to its hash gets no vote (asked before any node sits out)', async (t) => {
  t.teardown(() => stateLiar.clear('eth_getBlockByNumber'))
  stateLiar.set('eth_getBlockByNumber', { alter: (b) => (b === null ? b : { ...(b as object), stateRoot: `0x${'22'.repeat(32)}` }) })
  const n = `0x${(busy.head - 1).toString(16)}`
  const r = await rpc(tg.url('eth-1'), call('eth_getBalance', [busy.eoa, n]), { apiKey })
  t.same(r.json.result, await truth('eth_getBalance', [busy.eoa, n]))
  t.ok((await metric(tg.gateway.admin, 'tollgate_verify_failed_total', { network: 'eth-1', check: 'HEADER_HASH' }))! > 0, 'its header counted as failed')
})

t.test('verify reads: every state read at every kind of block is what an honest node answers, and says which header', async (t) => {
  for (const [what, block] of blocks) {
    for (const [method, params] of reads) {
      const full = [...params, block]
      const r = await rpc(tg.url('eth-1'), call(method, full, 'x'), { apiKey })
      t.same(r.json, { jsonrpc: '2.0', id: 'x', result: await truth(method, full) }, `${method} at ${what}`)
      const verifiedAt = r.headers.get('x-tollgate-verified')
      const expected =
        typeof block === 'string' && /^0x/.test(block)
          ? (await truth('eth_getBlockByNumber', [block, false])).hash
          : typeof block === 'object' && 'blockNumber' in (block as object)
            ? head.hash
            : typeof block === 'object'
              ? head.hash
              : (await truth('eth_getBlockByNumber', [block, false])).hash
      t.equal(verifiedAt, expected, `${method} at ${what}: verified against that block's header`)
    }
  }
  t.ok(stateLiar.received('eth_getProof') > 0, `the state liar was asked for proofs (${stateLiar.received('eth_getProof')})`)
  t.ok(codeLiar.received('eth_getCode') > 0, `the code liar was asked for code (${codeLiar.received('eth_getCode')})`)
  t.ok((await metric(tg.gateway.admin, 'tollgate_verify_failed_total', { network: 'eth-1', check: 'ACCOUNT_PROOF' }))! > 0, 'failed proofs counted')
  t.ok((await metric(tg.gateway.admin, 'tollgate_verify_failed_total', { network: 'eth-1', check: 'CODE_HASH' }))! > 0, 'failed code counted')
  t.equal(await metric(tg.gateway.admin, 'tollgate_upstream_out', { node: 'state-liar', reason: 'disputes' }), 1, 'the state liar sits out')
  t.ok(
    (await metric(tg.gateway.admin, 'tollgate_verify_failed_total', { network: 'eth-1', node: 'state-liar', check: 'ACCOUNT_PROOF' }))! > 0,
    'by node and check',
  )
  const verified = await metric(tg.gateway.admin, 'tollgate_verified_calls_total', { network: 'eth-1', method: 'eth_getBalance', outcome: 'verified' })
  t.ok(verified! >= 2 * blocks.length, `verified balances counted by method and outcome (${verified})`)
})

t.test('in a batch, each state read is proven too', async (t) => {
  const batch = reads.map(([method, params], i) => call(method, [...params, 'latest'], i))
  const r = await rpc(tg.url('eth-1'), batch, { apiKey })
  for (const [i, [method, params]] of reads.entries()) {
    t.same(r.json[i], { jsonrpc: '2.0', id: i, result: await truth(method, [...params, 'latest']) }, method)
  }
})

t.test('pending has no header: sent as it is', async (t) => {
  const r = await rpc(tg.url('eth-1'), call('eth_getTransactionCount', [busy.eoa, 'pending']), { apiKey })
  t.equal(r.headers.get('x-tollgate-verified'), null, 'not marked verified')
  t.match(r.json.result, /^0x/)
})

t.test('a block no node has: the node’s own error, never a value', async (t) => {
  const far = `0x${(busy.head + 1000).toString(16)}`
  const r = await rpc(tg.url('eth-1'), call('eth_getBalance', [busy.eoa, far]), { apiKey })
  t.same(r.json, { ...(await anvil.rpc('eth_getBalance', [busy.eoa, far])), id: 1 }, 'what anvil says of a block beyond its head')
  const unknown = { blockHash: `0x${'11'.repeat(32)}` }
  const byHash = await rpc(tg.url('eth-1'), call('eth_getBalance', [busy.eoa, unknown]), { apiKey })
  t.same(byHash.json, { ...(await anvil.rpc('eth_getBalance', [busy.eoa, unknown])), id: 1 }, 'what anvil says of an unknown hash')
})

t.test('when no node’s answer passes: ANSWER_UNVERIFIED naming the check, never the unchecked answer', async (t) => {
  const all = [honest, stateLiar, codeLiar, alsoHonest, thirdHonest]
  t.teardown(() => {
    for (const p of all) p.clear('eth_getProof')
  })
  for (const p of all) p.set('eth_getProof', { alter: (r) => ({ ...(r as object), nonce: '0x99' }) })
  // An account no test read before: a proof checked once is kept for its block (a read asked again is not proven again).
  const r = await rpc(tg.url('eth-1'), call('eth_getTransactionCount', ['0x00000000000000000000000000000000005e1f00', 'latest'], 3), { apiKey })
  t.equal(r.status, 502)
  t.equal(r.json.error.code, -32026)
  t.match(r.json.error.message, /ACCOUNT_PROOF/, r.json.error.message)
  t.notOk('result' in r.json, 'no result')
  t.equal(await metric(tg.gateway.admin, 'tollgate_verified_calls_total', { network: 'eth-1', method: 'eth_getTransactionCount', outcome: 'unverified' }), 1)
})

t.test('cost: one eth_getProof per read of an account at a block, and the header agreed once per block (once a second near the head)', async (t) => {
  for (const p of [honest, stateLiar, codeLiar, alsoHonest, thirdHonest]) p.clear()
  const proofs = () => [honest, stateLiar, codeLiar, alsoHonest, thirdHonest].reduce((c, p) => c + p.received('eth_getProof'), 0)
  const proofsBefore = proofs()
  const headerCallsBefore = (await metric(tg.gateway.admin, 'tollgate_verify_header_calls_total', { network: 'eth-1' }))!
  const n = `0x${(busy.head - 3).toString(16)}`
  const N = 40
  const started = performance.now()
  // Distinct accounts: each read is a proof.
  const account = (i: number) => `0x${(0xc057_0000 + i).toString(16).padStart(40, '0')}`
  for (let i = 0; i < N; i++) {
    const r = await rpc(tg.url('eth-1'), call('eth_getBalance', [account(i), n]), { apiKey })
    t.equal(r.json.result, await truth('eth_getBalance', [account(i), n]))
  }
  const seconds = Math.ceil((performance.now() - started) / 1000)
  const headerCalls = (await metric(tg.gateway.admin, 'tollgate_verify_header_calls_total', { network: 'eth-1' }))! - headerCallsBefore
  t.equal(proofs() - proofsBefore, N, `${N} proven reads of ${N} accounts, ${N} eth_getProof`)
  // The same account at the same block again: answered from what was proven, no node asked.
  const again = proofs()
  for (let i = 0; i < 10; i++) {
    const r = await rpc(tg.url('eth-1'), call('eth_getBalance', [account(0), n]), { apiKey })
    t.equal(r.json.result, await truth('eth_getBalance', [account(0), n]))
    t.ok(r.headers.get('x-tollgate-verified'), 'still marked verified')
  }
  t.equal(proofs(), again, 'a read of a block already proven asks no node')
  // A quorum of three of the five agree (the liars sit out); the block is near the head, so agreed again each second.
  t.ok(headerCalls <= 3 * (seconds + 1), `${headerCalls} header calls over ${seconds} s`)
  lieAboutState()
})
