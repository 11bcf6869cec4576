import t from 'tap'
import type { Anvil } from '../../harness/anvil.js'
import { anvilGateway } from '../helpers/anvil-gateway.js'
import { rpc } from '../helpers/gateway.js'
import { metric, until } from '../helpers/metrics.js'

// Two real anvils of one chain behind a gateway, one of them blocks behind (within
// health.maxLagBlocks, so it stays in the pool). Identical chains: the same genesis time, no
// mining of their own, every block mined by the test with the same timestamp on both. Before,
// every healthy node got its turn: eth_blockNumber alternated between the two heads, and a
// receipt of the newest block came back null whenever the node behind answered.

const GENESIS = 1_700_000_000
const args = ['--no-mining', '--timestamp', String(GENESIS)]

/** Mine `n` empty blocks, block i with timestamp GENESIS + i: the same blocks on every node. */
async function mine(node: Anvil, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const head = Number.parseInt((await node.rpc('eth_blockNumber')).result, 16)
    await node.rpc('evm_mine', [GENESIS + head + 1])
  }
}

const {
  anvil: ahead,
  tg,
  key: { apiKey },
  url,
} = await anvilGateway(t, {
  anvils: 2,
  names: ['ahead', 'behind'],
  anvil: { args },
  nodeWs: false,
  beforeGateway: async (_, [ahead, behind]) => {
    await mine(ahead!, 10)
    await mine(behind!, 5)
  },
  config: { health: { pollMs: 100 } },
})
const call = async (method: string, params: unknown[] = []) => (await rpc(url, { jsonrpc: '2.0', id: 1, method, params }, { apiKey })).json

/** The head monitor has polled both nodes and knows how far behind the second one is. */
const lagSeen = (lag: number) => until(async () => (await metric(tg.gateway.admin, 'tollgate_upstream_lag_blocks', { node: 'behind' })) === lag)

t.test('eth_blockNumber never goes back while one node is 5 blocks behind', async (t) => {
  t.ok(await lagSeen(5), 'the monitor sees the node 5 blocks behind')
  const seen: number[] = []
  for (let i = 0; i < 300; i++) seen.push(Number.parseInt((await call('eth_blockNumber')).result, 16))
  const backwards = seen.filter((n, i) => i > 0 && n < seen[i - 1]!).length
  t.equal(backwards, 0, `no answer below the one before it (${seen.filter((n) => n === 5).length} of 300 were the node behind's 5)`)
  t.equal(Math.min(...seen), 10, 'each answer is the head, 10')
})

t.test('a receipt of the newest block, and state at the newest block, come from a node that has it', async (t) => {
  const [from] = (await ahead.rpc('eth_accounts')).result
  const sent = await ahead.rpc('eth_sendTransaction', [{ from, to: from, value: '0x1' }])
  await ahead.rpc('evm_mine', [GENESIS + 11])
  t.ok(await lagSeen(6), 'the node behind is now 6 blocks behind')
  const receipts: unknown[] = []
  for (let i = 0; i < 60; i++) receipts.push((await call('eth_getTransactionReceipt', [sent.result])).result)
  t.equal(receipts.filter((r) => r === null).length, 0, 'no null receipt in 60')
  const balances: any[] = []
  for (let i = 0; i < 40; i++) balances.push(await call('eth_getBalance', [from, '0xb']))
  t.same(
    balances.filter((b) => b.error !== undefined),
    [],
    'a balance at block 11 is never asked of the node at block 5',
  )
})
