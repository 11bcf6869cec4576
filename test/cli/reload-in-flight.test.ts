import t from 'tap'
import { randomBytes } from 'node:crypto'
import { readFile, writeFile } from 'node:fs/promises'
import { request } from 'undici'
import type { Anvil } from '../../harness/anvil.js'
import { startAnvils } from '../helpers/anvil-gateway.js'
import { startFaultProxy } from '../helpers/fault-proxy.js'
import { runCli } from '../helpers/cli.js'
import { TEST_SECRET } from '../helpers/gateway.js'
import { startGatewayProcess } from '../helpers/gateway-process.js'
import { waitFor } from '../helpers/eventually.js'

// A call in flight on a node that a reload removes finishes on that node: the node is closed only
// once its calls have ended, not at the reload (its HTTP pool destroyed under the call would cut
// it, and the call would go again to another node: two sends of one call).

t.setTimeout(240_000)
const env = { TOLLGATE_SECRET: TEST_SECRET }
const [a, b] = (await startAnvils(t, {}, {})) as [Anvil, Anvil]
const proxyA = await startFaultProxy(a)
t.teardown(() => proxyA.close())
const nodeA = { url: proxyA.url, kind: 'full', name: 'node-a' }
const nodeB = { url: b.url, kind: 'full', name: 'node-b' }
const gateway = await startGatewayProcess(t, {
  config: { networks: { 'eth-1': { chainId: 31337, upstreams: [nodeA] } }, diagnostics: { responseHeaders: true } },
})
const created = await runCli(
  ['accounts', 'create', '--config', gateway.configPath, '--wallet', `0x${randomBytes(20).toString('hex')}`, '--plan', 'tier-3'],
  env,
)
if (created.code !== 0) throw new Error(`accounts create failed: ${created.stderr}`)
const url = `${gateway.url('eth-1')}?apikey=${created.last.apiKey}`

async function call(method: string, params: unknown[]): Promise<{ status: number; node: unknown; attempts: unknown; body: any }> {
  const res = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params }),
  })
  return { status: res.statusCode, node: res.headers['x-tollgate-node'], attempts: res.headers['x-tollgate-attempts'], body: await res.body.json() }
}

// The key works once the gateway's projection has it.
await waitFor(async () => (await call('eth_chainId', [])).status === 200, 'the new key is served')

t.test('a call in flight on a removed node is answered by that node', async (t) => {
  await a.freeze()
  t.teardown(() => a.thaw())
  const before = proxyA.received('eth_getBalance')
  const slow = call('eth_getBalance', [`0x${randomBytes(20).toString('hex')}`, 'latest'])
  await waitFor(() => proxyA.received('eth_getBalance') > before, 'the call reached node A')

  const running = JSON.parse(await readFile(gateway.configPath, 'utf8')) as Record<string, any>
  await writeFile(gateway.configPath, JSON.stringify({ ...running, networks: { 'eth-1': { chainId: 31337, upstreams: [nodeB] } } }))
  const from = gateway.logs.length
  gateway.signal('SIGHUP')
  const line = await gateway.waitForLog((l) => gateway.logs.indexOf(l) >= from && /^config reloaded|^reload refused/.test(l.msg), 60_000)
  t.same(line.changes?.nodes, [{ network: 'eth-1', added: ['node-b'], removed: ['node-a'], changed: [] }], 'node A removed')
  t.equal((await call('eth_blockNumber', [])).node, 'node-b', 'new calls go to node B')

  a.thaw()
  const answer = await slow
  t.equal(answer.status, 200, 'the call is answered')
  t.equal(answer.body.result, '0x0', 'the balance')
  t.equal(answer.node, 'node-a', 'answered by node A, where it started')
  t.equal(answer.attempts, '1', 'sent once')
})
