import t from 'tap'
import { startAnvil } from '../../harness/anvil.js'
import { deployAnonymousLogEmitter, deployLogEmitter, EMITTED_TOPIC, mineLogsBlock } from '../../harness/log-emitter.js'
import { startFaultProxy } from '../helpers/fault-proxy.js'
import { rpc, startTestGateway } from '../helpers/gateway.js'
import { metric } from '../helpers/metrics.js'

// Ordinary calls a wallet or an indexer makes all day must never sit an honest node out: an
// eth_call that fails (an invalid opcode, out of gas, a value above the balance, gas below the
// intrinsic cost) and an eth_getLogs with trailing wildcards ([T, null], [null], [[]]). Each once
// counted as a dispute against the honest node that answered it; five in ten minutes sat it out,
// and with both honest nodes out a liar was the whole quorum: another tenant's verified balance
// came back as the liar's. Two honest nodes and a liar (its proofs and balances forged), ten
// failing calls and ten trailing-wildcard filters from one key, then another key's balance.

const anvil = await startAnvil()
t.teardown(() => anvil.stop())
await anvil.rpc('anvil_mine', ['0x46'])
const [one, anon] = [await deployLogEmitter(anvil), await deployAnonymousLogEmitter(anvil)]
// One block with a log of one topic and a log of none: the one only some clients' rules match.
const logsBlock = `0x${(
  await mineLogsBlock(anvil, one.from, [
    [one.address, '0x01'],
    [anon.address, '0x02'],
  ])
).toString(16)}`
await anvil.rpc('anvil_mine', ['0x2'])

const [honest, alsoHonest, liar] = await Promise.all([0, 1, 2].map(() => startFaultProxy(anvil)))
t.teardown(() => Promise.all([honest, alsoHonest, liar].map((p) => p!.close())))
const FORGED = '0xd3c21bcecceda1000000' // 1,000,000 ETH
liar!.set('eth_getProof', { alter: (proof) => ({ ...(proof as object), balance: FORGED }) })
liar!.set('eth_getBalance', { alter: () => FORGED })

const tg = await startTestGateway(t, {
  networks: {
    'eth-1': {
      chainId: 31337,
      verify: 'calls',
      upstreams: [
        { url: honest!.url, name: 'honest', kind: 'full' },
        { url: alsoHonest!.url, name: 'also-honest', kind: 'full' },
        { url: liar!.url, name: 'liar', kind: 'full' },
      ],
    },
  },
  config: { diagnostics: { responseHeaders: true }, cache: { enabled: false } },
})

const poor = '0x00000000000000000000000000000000000a75e2'
const failing: Record<string, unknown>[] = [
  { data: '0xfe' },
  // PUSH3 100000, then a countdown of 26 gas a round: far more than the 100,000 gas it is given.
  { data: '0x620186a05b600190038060045700', gas: '0x186a0' },
  { from: poor, to: one.from, value: '0xde0b6b3a7640000' },
  { to: one.address, data: '0x01', gas: '0x5000' },
  { data: '0xfe', gas: '0x30000' },
]
const wildcards: unknown[][] = [[EMITTED_TOPIC, null], [null], [[]], [EMITTED_TOPIC, []], [null, null]]

t.test('ten failing calls and ten trailing-wildcard filters: each answered as anvil answers it', async (t) => {
  const { apiKey } = await tg.createKey('tier-3')
  for (let i = 0; i < 10; i++) {
    const tx = failing[i % failing.length]!
    const truth = await anvil.rpc('eth_call', [tx, 'latest'])
    const r = await rpc(tg.url('eth-1'), { jsonrpc: '2.0', id: i, method: 'eth_call', params: [tx, 'latest'] }, { apiKey })
    t.ok(truth.error, `call ${i}: anvil answers an error`)
    t.same(r.json.error, truth.error, `call ${i}: anvil's own error (${JSON.stringify(r.json).slice(0, 160)})`)
  }
  for (let i = 0; i < 10; i++) {
    const filter = { fromBlock: logsBlock, toBlock: logsBlock, topics: wildcards[i % wildcards.length] }
    const truth = await anvil.rpc('eth_getLogs', [filter])
    const r = await rpc(tg.url('eth-1'), { jsonrpc: '2.0', id: i, method: 'eth_getLogs', params: [filter] }, { apiKey })
    t.same(r.json.result, truth.result, `filter ${JSON.stringify(filter.topics)}: anvil's logs (${JSON.stringify(r.json).slice(0, 160)})`)
  }
})

t.test('the honest nodes still serve, and another tenant reads the honest balance, verified', async (t) => {
  for (const node of ['honest', 'also-honest']) {
    t.equal(await metric(tg.gateway.admin, 'tollgate_upstream_out', { network: 'eth-1', node, reason: 'disputes' }), 0, `${node} not sat out`)
    t.equal(await metric(tg.gateway.admin, 'tollgate_upstream_healthy', { network: 'eth-1', node }), 1, `${node} in service`)
  }
  const other = (await tg.createKey('tier-3')).apiKey
  const head = (await anvil.rpc('eth_getBlockByNumber', ['latest', false])).result as { hash: string }
  const truth = await anvil.rpc('eth_getBalance', [one.from, 'latest'])
  // Each read is asked of a node the pool chooses: the liar's forged proof may be asked first, and fails.
  for (let i = 0; i < 6; i++) {
    const r = await rpc(tg.url('eth-1'), { jsonrpc: '2.0', id: i, method: 'eth_getBalance', params: [one.from, 'latest'] }, { apiKey: other })
    t.equal(r.json.result, truth.result, `read ${i}: the honest balance (${JSON.stringify(r.json).slice(0, 160)})`)
    t.equal(r.headers.get('x-tollgate-verified'), head.hash, `read ${i}: verified at the chain's head`)
  }
})
