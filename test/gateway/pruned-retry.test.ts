import t from 'tap'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startAnvils } from '../helpers/anvil-gateway.js'
import { startCountingProxy } from '../helpers/counting-proxy.js'
import { startFaultProxy } from '../helpers/fault-proxy.js'
import { oneNetwork, rpc, startTestGateway } from '../helpers/gateway.js'
import { revertingCode } from '../helpers/contracts.js'
import { FakeClock } from '../helpers/fake-clock.js'
import { usageEventsOf } from '../helpers/usage-events.js'
import { METHODS } from '../../src/rpc/method-table.js'

// A full node's answer that the state is pruned is tried once more on an archive node (issue 38,
// item 6): only on a node's own pruned-state error, never on a revert reason that says "pruned" or
// "missing trie node" (before, those sent the call to the archive node, charged as a full-node
// call); and the archive call is charged to the key's archive limit.
// The clock stands still: the key's buckets do not refill between calls.

const dir = mkdtempSync(join(tmpdir(), 'tollgate-pruned-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
const catalog = JSON.parse(readFileSync(new URL('../../schemas/catalogs/default.json', import.meta.url), 'utf8'))
delete catalog.$schema
const tier3 = catalog.plans.find((p: { id: string }) => p.id === 'tier-3')
// One archive call a second: the second archive call in a still second is refused.
catalog.plans.push({ ...tier3, id: 'one-archive', name: 'One Archive', limits: { fullRps: 100, archiveRps: 1 } })
const catalogPath = join(dir, 'catalog.json')
writeFileSync(catalogPath, JSON.stringify(catalog))

const [full, archive] = await startAnvils(t, {}, {})
const SAYS_MISSING_TRIE_NODE = '0x00000000000000000000000000000000000000a1'
const SAYS_PRUNED = '0x00000000000000000000000000000000000000a2'
await full!.rpc('anvil_setCode', [SAYS_MISSING_TRIE_NODE, revertingCode('missing trie node 1a2b (path ) <nil>')])
await full!.rpc('anvil_setCode', [SAYS_PRUNED, revertingCode('state at block #1 is pruned')])
const fullProxy = await startFaultProxy(full!)
const archiveProxy = await startCountingProxy(archive!)
t.teardown(() => Promise.all([fullProxy.close(), archiveProxy.close()]))
const clock = new FakeClock(Date.now())
const tg = await startTestGateway(t, {
  networks: oneNetwork([
    { url: fullProxy.url, name: 'full' },
    { url: archiveProxy.url, name: 'archive', kind: 'archive' },
  ]),
  catalog: catalogPath,
  clock,
  limits: { queueMs: 0 },
})
const call = (method: string, params: unknown[], id = 1) => ({ jsonrpc: '2.0', id, method, params })

t.test('a revert reason that says "pruned" or "missing trie node" reaches no archive node', async (t) => {
  const { apiKey } = await tg.createKey('tier-3')
  for (const to of [SAYS_MISSING_TRIE_NODE, SAYS_PRUNED]) {
    const r = await rpc(tg.url('eth-1'), call('eth_call', [{ to }, 'latest']), { apiKey })
    t.equal(r.json.error?.code, 3, 'the full node’s revert')
    t.match(r.json.error?.message, /^execution reverted: (missing trie node|state at block #1 is pruned)/)
  }
  t.equal(archiveProxy.count('eth_call'), 0, 'the archive node was not asked')
})

t.test("a full node's pruned-state error goes to the archive node, charged as an archive call", async (t) => {
  // As a pruned geth full node answers state behind a block hash it no longer has.
  fullProxy.set('eth_getBalance', { answerError: { code: -32000, message: 'missing trie node 1a2b3c (path ) <nil>' } })
  t.teardown(() => fullProxy.clear('eth_getBalance'))
  const key = await tg.createKey('one-archive')
  const genesis = (await archive!.rpc('eth_getBlockByNumber', ['0x0', false])).result.hash
  const who = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266'
  const params = [who, { blockHash: genesis }]

  const first = await rpc(tg.url('eth-1'), call('eth_getBalance', params), { apiKey: key.apiKey })
  t.equal(first.json.result, (await archive!.rpc('eth_getBalance', params)).result, 'the archive node answered')
  t.equal(archiveProxy.count('eth_getBalance'), 1)
  // The key's one archive call this second is spent: the retry of the next is refused as one.
  const second = await rpc(tg.url('eth-1'), call('eth_getBalance', params, 2), { apiKey: key.apiKey })
  t.equal(second.status, 429)
  t.equal(second.json.id, 2, "the client's id")
  t.equal(second.json.error?.code, -32005)
  t.match(second.json.error?.message, /this key may make 1 archive-node calls per second/)
  t.equal(archiveProxy.count('eth_getBalance'), 1, 'the archive node was not asked again')
  t.equal(fullProxy.received('eth_getBalance'), 2, 'the full node was asked each time')

  await tg.stop()
  const usage = await usageEventsOf(tg.config, key.keyId)
  const sum = (kind: string, field: 'requests' | 'units') => usage.filter((e) => e.kind === kind).reduce((n, e) => n + (e[field] ?? 0), 0)
  t.equal(sum('archive', 'requests'), 1, 'one archive call in the usage events')
  t.equal(sum('archive', 'units'), METHODS.eth_getBalance!.cost, 'at its units')
  t.equal(sum('full', 'requests'), 1, 'the refused retry: the full node’s call, counted as served')
})
