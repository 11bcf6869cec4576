import t from 'tap'
import { startAnvil } from '../../harness/anvil.js'
import { rpc, startTestGateway } from '../helpers/gateway.js'
import { runCli } from '../helpers/cli.js'
import { until } from '../helpers/eventually.js'

// Which calls pass, which get -32601 or 403 and with what message, and which node served, with a
// pruned anvil as the full node (keeps 128 blocks of state) and an archive anvil, both of chain 1
// (a node of another chain is taken out). One address has a different balance on each, so its
// balance says which kind answered.
const full = await startAnvil({ chainId: 1, args: ['--prune-history', '128'] })
const archive = await startAnvil({ chainId: 1 })
const other = await startAnvil({ chainId: 56 })
t.teardown(async () => {
  await Promise.all([full.stop(), archive.stop(), other.stop()])
})
await full.rpc('anvil_mine', ['0x12c'])
await archive.rpc('anvil_mine', ['0x12c'])
const MARK = '0x4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d'
await full.rpc('anvil_setBalance', [MARK, '0xf'])
await archive.rpc('anvil_setBalance', [MARK, '0xa'])
const tg = await startTestGateway(t, {
  networks: {
    'eth-1': {
      chainId: 1,
      upstreams: [
        { url: full.url, ws: full.wsUrl, kind: 'full' },
        { url: archive.url, kind: 'archive' },
      ],
    },
    'bsc-1': {
      chainId: 56,
      upstreams: [
        { url: other.url, kind: 'full' },
        { url: other.url, kind: 'archive' },
      ],
    },
  },
})
const eth = tg.url('eth-1')
const call = (method: string, params: unknown[] = [], id: number | string = 1) => ({ jsonrpc: '2.0', id, method, params })
const who = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266'
/** The kind of node that answers a recent-state read of this key. */
const servedBy = async (apiKey: string): Promise<string> => {
  const balance = (await rpc(eth, call('eth_getBalance', [MARK, 'latest']), { apiKey })).json.result
  return balance === '0xf' ? 'full' : balance === '0xa' ? 'archive' : `neither (${balance})`
}

const trial = await tg.createKey('free-trial')
const tier1Full = await tg.createKey('tier-1', [{ network: 'eth-1', kind: 'full' }])
const tier1Archive = await tg.createKey('tier-1', [{ network: 'eth-1', kind: 'archive' }])
const tier3 = await tg.createKey('tier-3')
const priv = await tg.createKey('private')

t.test('Free Trial: full nodes only', async (t) => {
  t.equal(await servedBy(trial.apiKey), 'full', 'served by the full node')
  const trace = await rpc(eth, call('trace_block', ['0x1']), { apiKey: trial.apiKey })
  t.equal(trace.status, 200)
  t.equal(trace.json.error.code, -32601)
  t.match(trace.json.error.message, /trace_\* needs an archive node; the Free Trial plan has none/)
  const old = await rpc(eth, call('eth_getBalance', [who, '0x1']), { apiKey: trial.apiKey })
  t.equal(old.status, 403)
  t.equal(old.json.error.code, -32003)
  t.match(old.json.error.message, /block 1 is older than the 128 blocks full nodes keep.*no archive access/)
  const recent = await rpc(eth, call('eth_getBalance', [who, 'latest']), { apiKey: trial.apiKey })
  t.match(recent.json.result, /^0x/)
})

t.test('Tier 3: old state and trace_* from the archive node, the rest from the full node', async (t) => {
  const direct = await archive.rpc('eth_getBalance', [who, '0x1'])
  const old = await rpc(eth, call('eth_getBalance', [who, '0x1']), { apiKey: tier3.apiKey })
  t.equal(old.status, 200)
  t.equal(old.json.result, direct.result, 'the archive node answered what the pruned one cannot')
  const prunedSays = await full.rpc('eth_getBalance', [who, '0x1'])
  t.match(prunedSays.error.message, /BlockOutOfRange/, 'the pruned node indeed lacks it')
  const trace = await rpc(eth, call('trace_block', ['0x0']), { apiKey: tier3.apiKey })
  t.same(trace.json.result, (await archive.rpc('trace_block', ['0x0'])).result)
  t.equal(await servedBy(tier3.apiKey), 'full')
  t.equal(
    (await rpc(eth, call('eth_getBalance', [who, '0x12b']), { apiKey: tier3.apiKey })).json.result,
    (await full.rpc('eth_getBalance', [who, '0x12b'])).result,
    'recent state from the full node',
  )
})

t.test('Tier 1: only the chosen node', async (t) => {
  t.equal(await servedBy(tier1Archive.apiKey), 'archive', 'an archive-only choice is served by the archive node')
  const trace = await rpc(eth, call('trace_block', ['0x1']), { apiKey: tier1Full.apiKey })
  t.equal(trace.json.error.code, -32601)
  const elsewhere = await rpc(tg.url('bsc-1'), call('eth_chainId'), { apiKey: tier1Full.apiKey })
  t.equal(elsewhere.status, 403)
  t.match(elsewhere.json.error.message, /Tier 1 plan of this account covers eth-1 full, not bsc-1/)
  t.equal((await rpc(tg.url('bsc-1'), call('eth_chainId'), { apiKey: tier3.apiKey })).json.result, '0x38', 'Tier 3 has every network')
})

t.test('Private Node: every node, no rate limit', async (t) => {
  const batch = Array.from({ length: 100 }, (_, i) => call('eth_chainId', [], i))
  const answers = await Promise.all(Array.from({ length: 8 }, () => rpc(eth, batch, { apiKey: priv.apiKey })))
  t.ok(
    answers.every((a) => a.status === 200),
    '800 calls at once, none limited',
  )
  t.equal((await rpc(eth, call('trace_block', ['0x0']), { apiKey: priv.apiKey })).status, 200)
})

t.test('the method policy: served, unknown and refused methods', async (t) => {
  for (const m of ['eth_chainId', 'eth_feeHistory', 'eth_maxPriorityFeePerGas', 'eth_syncing', 'eth_getProof', 'eth_createAccessList']) {
    const params =
      m === 'eth_feeHistory'
        ? ['0x1', 'latest', []]
        : m === 'eth_getProof'
          ? [who, [], 'latest']
          : m === 'eth_createAccessList'
            ? [{ from: who, to: who }, 'latest']
            : []
    const r = await rpc(eth, call(m, params), { apiKey: tier3.apiKey })
    t.notOk(r.json.error?.code === -32601, `${m} is served`)
  }
  // A method outside the table goes to no node unless the network's forwardMethods allows it.
  const unknown = await rpc(eth, call('eth_doesNotExist'), { apiKey: tier3.apiKey })
  t.match(unknown.json.error, { code: -32601, message: /eth_doesNotExist is not forwarded by this gateway .* forwardMethods/ }, 'the gateway says why')
  const sub = await rpc(eth, call('eth_subscribe', ['newHeads']), { apiKey: tier3.apiKey })
  t.match(sub.json.error.message, /WebSocket/)
  for (const [m, why] of [
    ['admin_nodeInfo', /administers the node/],
    ['anvil_mine', /development node/],
    ['hardhat_reset', /development node/],
    ['eth_sendTransaction', /eth_sendRawTransaction/],
    ['debug_setHead', /changes the node’s chain/],
    ['miner_start', /mining/],
  ] as const) {
    const r = await rpc(eth, call(m), { apiKey: tier3.apiKey })
    t.equal(r.json.error.code, -32601, m)
    t.match(r.json.error.message, why)
  }
})

t.test('filters stay on the node that made them, for the key that made them', async (t) => {
  const created = await rpc(eth, call('eth_newBlockFilter'), { apiKey: tier3.apiKey })
  const id = created.json.result
  t.match(id, /^0x/)
  await full.rpc('anvil_mine', ['0x2'])
  const changes = await rpc(eth, call('eth_getFilterChanges', [id]), { apiKey: tier3.apiKey })
  t.equal(changes.json.result.length, 2, 'two new blocks')
  const stranger = await rpc(eth, call('eth_getFilterChanges', [id]), { apiKey: trial.apiKey })
  t.same(stranger.json.error, { code: -32000, message: 'filter not found' }, 'another key cannot read it')
  t.equal((await rpc(eth, call('eth_uninstallFilter', [id]), { apiKey: tier3.apiKey })).json.result, true)
  t.equal((await rpc(eth, call('eth_getFilterChanges', [id]), { apiKey: tier3.apiKey })).json.error.message, 'filter not found')
})

t.test('choosing nodes: a plan rule, and a command that changes them', async (t) => {
  const env = { TOLLGATE_SECRET: process.env.TOLLGATE_SECRET }
  const tooMany = await runCli(
    ['accounts', 'create', '--config', tg.configPath, '--wallet', '0x' + '22'.repeat(20), '--plan', 'tier-1', '--nodes', 'eth-1:full,bsc-1:full'],
    env,
  )
  t.not(tooMany.code, 0)
  t.match(tooMany.stderr, /Tier 1 plan includes 1 node; 2 were chosen/)
  const none = await runCli(['accounts', 'create', '--config', tg.configPath, '--wallet', '0x' + '22'.repeat(20), '--plan', 'tier-2'], env)
  t.match(none.stderr, /Tier 2 plan includes 3 nodes of your choice/)
  const trialArchive = await runCli(
    ['accounts', 'create', '--config', tg.configPath, '--wallet', '0x' + '22'.repeat(20), '--plan', 'free-trial', '--nodes', 'eth-1:archive'],
    env,
  )
  t.match(trialArchive.stderr, /Free Trial plan has no archive nodes/)

  const changed = await runCli(['accounts', 'nodes', '--config', tg.configPath, '--account', tier1Full.accountId, '--nodes', 'bsc-1:full'], env)
  t.equal(changed.code, 0, changed.stderr)
  // The gateway learns of the change through its event log: wait for it (10 s is an outer bound,
  // not a promise of speed).
  const served = await until(async () => (await rpc(tg.url('bsc-1'), call('eth_chainId'), { apiKey: tier1Full.apiKey })).status === 200)
  t.ok(served, 'the new choice is served')
  t.equal((await rpc(eth, call('eth_chainId'), { apiKey: tier1Full.apiKey })).status, 403, 'the old one is not')
})
