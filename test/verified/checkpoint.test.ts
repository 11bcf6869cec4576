import t from 'tap'
import { startAnvil } from '../../harness/anvil.js'
import { within } from '../helpers/eventually.js'
import { rpc, startTestGateway } from '../helpers/gateway.js'

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

t.test('a header more than 10,000 blocks from the checkpoint is refused with what to do', async (t) => {
  const far = await startAnvil()
  t.teardown(() => far.stop())
  await far.rpc('anvil_mine', ['0x2774']) // 10,100 blocks
  const checkpoint = (await far.rpc('eth_getBlockByNumber', ['0x1', false])).result
  const gw = await startTestGateway(t, {
    networks: {
      'eth-1': {
        chainId: 31337,
        verify: 'reads',
        verifyCheckpoint: { number: 1, hash: checkpoint.hash },
        upstreams: [{ url: far.url, name: 'far', kind: 'full' }],
      },
    },
    config: { cache: { enabled: false } },
  })
  const key = (await gw.createKey('tier-3')).apiKey
  const r = await rpc(gw.url('eth-1'), balance('latest'), { apiKey: key })
  t.equal(r.json.error?.code, -32026, 'ANSWER_UNVERIFIED')
  t.match(r.json.error?.message, /HEADER_AGREEMENT/, 'the check named')
  const near = await rpc(gw.url('eth-1'), balance('0x64'), { apiKey: key })
  t.equal(near.json.result, (await far.rpc('eth_getBalance', [who, '0x64'])).result, 'a block 99 above it is proven')
})
