import t from 'tap'
import { startAnvil } from '../../harness/anvil.js'
import { CheckpointChain } from '../../src/verified-reads/checkpoint-chain.js'
import { verifyHeader } from '../../src/proofs/header.js'
import { within } from '../helpers/eventually.js'
import { rpc, startTestGateway } from '../helpers/gateway.js'
import { poolOn } from '../helpers/upstream-pool.js'

// Issue 40, item 1: a header may be trusted by its parent links to a configured checkpoint. Two
// real anvils of one chain id with different histories (another genesis time: every block hash
// differs). A network whose one node is on the checkpoint's chain proves its reads, above and
// below the checkpoint; a network whose one node is on the other chain has none of its headers
// trusted, although it is the only node (and so agrees with itself).

const [ours, theirs] = await Promise.all([startAnvil(), startAnvil({ args: ['--timestamp', '1700000000'] })])
t.teardown(() => Promise.all([ours.stop(), theirs.stop()]))
await Promise.all([ours.rpc('anvil_mine', ['0x1e']), theirs.rpc('anvil_mine', ['0x1e'])])
const checkpointBlock = (await ours.rpc('eth_getBlockByNumber', ['0xa', false])).result
const theirsAtCheckpoint = (await theirs.rpc('eth_getBlockByNumber', ['0xa', false])).result.hash
const verifyCheckpoint = { number: 10, hash: checkpointBlock.hash }
const tg = await startTestGateway(t, {
  networks: {
    'eth-1': { chainId: 31337, verify: 'reads', verifyCheckpoint, upstreams: [{ url: ours.url, name: 'ours', kind: 'full' }] },
    'eth-2': { chainId: 31337, verify: 'reads', verifyCheckpoint, upstreams: [{ url: theirs.url, name: 'theirs', kind: 'full' }] },
    'eth-3': { chainId: 31337, verify: 'reads', upstreams: [{ url: theirs.url, name: 'theirs', kind: 'full' }] },
  },
  config: { diagnostics: { responseHeaders: true }, cache: { enabled: false } },
})
const { apiKey } = await tg.createKey('tier-3')
const [who] = (await ours.rpc('eth_accounts')).result as string[]
const balance = (block: string) => ({ jsonrpc: '2.0', id: 1, method: 'eth_getBalance', params: [who, block] })

t.test('on the checkpoint’s chain: reads above and below the checkpoint are proven', async (t) => {
  t.not(checkpointBlock.hash, theirsAtCheckpoint, 'the two chains differ at the checkpoint')
  for (const block of ['latest', '0x14', '0xa', '0x3']) {
    const r = await rpc(tg.url('eth-1'), balance(block), { apiKey })
    t.equal(r.json.result, (await ours.rpc('eth_getBalance', [who, block])).result, `the balance at ${block}`)
    t.ok(r.headers.get('x-tollgate-verified'), `${block}: verified`)
  }
})

t.test('on another chain, a lone node’s headers are not trusted: no read is answered', async (t) => {
  for (const block of ['latest', '0x14', '0x3']) {
    const r = await rpc(tg.url('eth-2'), balance(block), { apiKey })
    t.equal(r.json.result, undefined, `no balance at ${block}`)
    t.equal(r.json.error?.code, -32026, `${block}: ANSWER_UNVERIFIED`)
    t.match(r.json.error?.message, /HEADER_AGREEMENT/, `${block}: the check named`)
  }
  // Without a checkpoint the same lone node is trusted: what the checkpoint adds.
  const r = await rpc(tg.url('eth-3'), balance('latest'), { apiKey })
  t.equal(r.json.result, (await theirs.rpc('eth_getBalance', [who, 'latest'])).result, 'without one, its own chain is served')
})

t.test('a head that moves on is linked by its one new header', async (t) => {
  await ours.rpc('anvil_mine', ['0x1'])
  const head = Number((await ours.rpc('eth_blockNumber')).result)
  const headHash = (await ours.rpc('eth_getBlockByNumber', [`0x${head.toString(16)}`, false])).result.hash
  // The gateway agrees on latest again within a second: wait (bounded) for a read verified at the new head.
  let verifiedAt: string | null = null
  await within(15_000, async () => {
    verifiedAt = (await rpc(tg.url('eth-1'), balance('latest'), { apiKey })).headers.get('x-tollgate-verified')
    return verifiedAt === headHash
  })
  t.equal(verifiedAt, headHash, 'verified at the new head')
})

t.test('a header further from the checkpoint than a walk may go is refused with what to do', async (t) => {
  // The gateway's bound is 10,000 blocks (MAX_LINK_BLOCKS); anvil mines 10,000 in about 110 s
  // here, so the chain is given a bound of 100 and walks a real anvil of 150 blocks.
  const far = await startAnvil()
  t.teardown(() => far.stop())
  await far.rpc('anvil_mine', ['0x96'])
  const headerAt = async (n: number) => {
    const header = (await far.rpc('eth_getBlockByNumber', [`0x${n.toString(16)}`, false])).result
    return { number: n, hash: verifyHeader(header), header }
  }
  const pool = poolOn(t, [{ name: 'far', url: far.url }])
  const checkpoint = await headerAt(1)
  const chain = new CheckpointChain(pool, { number: 1, hash: checkpoint.hash }, { timeoutMs: 5_000, maxLinkBlocks: 100 })
  await t.rejects(
    chain.link(await headerAt(150)),
    { code: 'HEADER_AGREEMENT', message: /149 blocks away: configure a newer verifyCheckpoint/ },
    '149 blocks above it: refused, no header asked',
  )
  t.equal(chain.calls, 0, 'no header asked for a walk that is too long')
  await chain.link(await headerAt(100))
  t.equal(chain.calls, 98, 'a header 99 above it: linked, each of the 98 headers between asked once (one batch)')
  await chain.link(await headerAt(150))
  t.equal(chain.calls, 98 + 49, 'the one 149 above: linked down to the one at 100 (the 49 between)')
})

t.test('a long walk is the network’s, in the background, never inside the call that needed it', async (t) => {
  // The gateway's bound inside a call is 256 headers (CALL_WALK_BLOCKS); here 20, over a real
  // anvil of 150 blocks, and calls that do not wait for the network's walk (waitMs 0).
  const far = await startAnvil()
  t.teardown(() => far.stop())
  await far.rpc('anvil_mine', ['0x96'])
  const headerAt = async (n: number) => {
    const header = (await far.rpc('eth_getBlockByNumber', [`0x${n.toString(16)}`, false])).result
    return { number: n, hash: verifyHeader(header), header }
  }
  const pool = poolOn(t, [{ name: 'far', url: far.url }])
  const checkpoint = await headerAt(1)
  const chain = new CheckpointChain(pool, { number: 1, hash: checkpoint.hash }, { timeoutMs: 5_000, callWalkBlocks: 20, waitMs: 0 })
  const at100 = await headerAt(100)
  await t.rejects(
    chain.link(at100),
    { code: 'HEADER_AGREEMENT', message: /linking 99 blocks to it in the background; retry/ },
    '99 blocks from the checkpoint: the call is refused with a retry, not made to walk them',
  )
  // Calls meanwhile wait for the one walk under way (none starts another); bounded.
  const linked = await within(20_000, () =>
    chain.link(at100).then(
      () => true,
      () => false,
    ),
  )
  t.ok(linked !== undefined, 'linked once the network’s walk is done')
  t.equal(chain.calls, 98, 'the 98 headers between asked once, by one walk')
  await chain.link(await headerAt(110))
  t.equal(chain.calls, 98 + 9, 'a header 10 above a linked one: walked in the call (9 headers between)')
})
