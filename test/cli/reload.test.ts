import t from 'tap'
import { randomBytes } from 'node:crypto'
import { readFile, writeFile } from 'node:fs/promises'
import { request } from 'undici'
import type { Anvil } from '../../harness/anvil.js'
import { startAnvils } from '../helpers/anvil-gateway.js'
import { runCli } from '../helpers/cli.js'
import { TEST_SECRET } from '../helpers/gateway.js'
import { startGatewayProcess, type GatewayProcess } from '../helpers/gateway-process.js'
import { connectWs, type WsClient } from '../helpers/ws-client.js'
import { CallLoop } from '../helpers/call-loop.js'
import { metric } from '../helpers/metrics.js'
import { freePort } from '../../harness/free-port.js'

// Changing a node needed a restart, which closed every WebSocket (1001); SIGHUP killed the gateway
// at once. Now `tollgate reload` (or SIGHUP) applies the config file again: a node added and the
// old one removed under HTTP load and a WebSocket subscriber, no call failing and the subscriber
// keeping its subscription id; a file that fails its checks, or that changes a listener, is
// refused and the running config serves on.

t.setTimeout(300_000)
const env = { TOLLGATE_SECRET: TEST_SECRET }
// Another gas limit: B's blocks never hash as A's (two anvils started in the same second mine the same blocks).
const [a, b] = (await startAnvils(t, { blockTime: 1 }, { blockTime: 1, args: ['--gas-limit', '30000001'] })) as [Anvil, Anvil]
const nodeA = { url: a.url, ws: a.wsUrl, kind: 'full', name: 'node-a' }
const nodeB = { url: b.url, ws: b.wsUrl, kind: 'full', name: 'node-b' }

const gateway = await startGatewayProcess(t, { config: { networks: { 'eth-1': { chainId: 31337, upstreams: [nodeA] } } } })
/** The config file as the gateway started with it (listen and dataDir filled in by the helper). */
const started = JSON.parse(await readFile(gateway.configPath, 'utf8')) as Record<string, any>
const created = await runCli(
  ['accounts', 'create', '--config', gateway.configPath, '--wallet', `0x${randomBytes(20).toString('hex')}`, '--plan', 'tier-3'],
  env,
)
if (created.code !== 0) throw new Error(`accounts create failed: ${created.stderr}`)
const apiKey: string = created.last.apiKey
const httpUrl = `${gateway.url('eth-1')}?apikey=${apiKey}`

/** One eth_blockNumber through the gateway: its status and result. */
async function blockNumber(url = httpUrl): Promise<{ status: number; result: unknown }> {
  const res = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }),
  })
  const body = (await res.body.json()) as { result?: unknown }
  return { status: res.statusCode, result: body.result }
}

/** The next log line matching `match` after the `from`-th line (a reload's own line, not an earlier one's). */
function nextLog(gw: GatewayProcess, from: number, match: (l: Record<string, any>) => boolean): Promise<Record<string, any>> {
  return gw.waitForLog((l) => gw.logs.indexOf(l) >= from && match(l), 60_000)
}

/** The next head on subscription `id` that is a block of `node` and not of `not`. */
async function headOf(ws: WsClient, id: string, node: typeof a, not: typeof a): Promise<any> {
  for (;;) {
    const n = await ws.nextNotification(id, 30_000)
    if (n === undefined) return undefined
    const hash = n.params.result.hash
    const [here, there] = await Promise.all([node.rpc('eth_getBlockByHash', [hash, false]), not.rpc('eth_getBlockByHash', [hash, false])])
    if (here.result && !there.result) return n
  }
}

// The key works once the gateway's projection has it (within a second, by contract).
for (let status = 0; status !== 200; ) status = (await blockNumber()).status

t.test('a reload adds a node and removes the old one: no call fails, the subscriber keeps its subscription id', async (t) => {
  const ws = await connectWs(`${gateway.ws}/ws/eth-1?apikey=${apiKey}`)
  t.teardown(() => ws.close())
  let closed = false
  void ws.closed.then(() => (closed = true))
  const id: string = (await ws.call({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['newHeads'] })).result
  t.match(id, /^0x[0-9a-f]{32}$/, 'subscribed')
  t.ok(await headOf(ws, id, a, b), 'heads come from node A')

  const load = new CallLoop(() => httpUrl, 4)
  t.teardown(() => load.stop())
  await load.more(50)
  await writeFile(gateway.configPath, JSON.stringify({ ...started, networks: { 'eth-1': { chainId: 31337, upstreams: [nodeB] } } }))
  const from = gateway.logs.length
  const sent = await runCli(['reload', '--config', gateway.configPath], env)
  t.equal(sent.code, 0, sent.stderr)
  t.same(sent.last, { pid: gateway.pid, role: 'a gateway' }, 'tollgate reload found the gateway through its data folder and signalled it')
  const reloaded = await nextLog(gateway, from, (l) => /^config reloaded|^reload refused/.test(l.msg))
  t.equal(reloaded.msg, 'config reloaded')
  t.same(reloaded.changes.nodes, [{ network: 'eth-1', added: ['node-b'], removed: ['node-a'], changed: [] }], 'the log says which nodes came and went')

  const head = await headOf(ws, id, b, a)
  t.ok(head, 'heads now come from node B')
  t.equal(head?.params.subscription, id, 'under the same subscription id')
  const callsB = async () => (await metric(gateway.admin, 'tollgate_upstream_calls_total', { network: 'eth-1', node: 'node-b' })) ?? 0
  const before = await callsB()
  await load.more(200)
  t.ok((await callsB()) > before, 'calls go to node B')
  t.equal(await metric(gateway.admin, 'tollgate_upstream_healthy', { network: 'eth-1', node: 'node-a' }), undefined, 'node A is out of the pool')
  const counts = await load.stop()
  t.equal(counts.failed, 0, `no call failed (${counts.served} served): ${counts.failures.join(' | ')}`)
  t.equal(counts.refused, 0, 'no connection refused: the gateway never stopped listening')
  t.equal(ws.messages.filter((m) => m.method !== 'eth_subscription' && m.id !== 1).length, 0, 'the subscriber got nothing but its heads')
  t.notOk(closed, 'the WebSocket is still open')
})

t.test('a config that fails its checks is refused, and the running one serves on', async (t) => {
  const running = JSON.parse(await readFile(gateway.configPath, 'utf8')) as Record<string, any>
  await writeFile(gateway.configPath, JSON.stringify({ ...running, networks: { 'eth-1': { chainId: 0, upstreams: [nodeA] } } }))
  // tollgate reload checks the file first, and sends nothing.
  const cli = await runCli(['reload', '--config', gateway.configPath], env)
  t.equal(cli.code, 1, 'tollgate reload fails')
  t.match(cli.stderr, /networks\/eth-1\/chainId/, 'naming the field')
  // SIGHUP straight to the process: the gateway checks the file itself.
  const from = gateway.logs.length
  gateway.signal('SIGHUP')
  const refused = await nextLog(gateway, from, (l) => /^config reloaded|^reload refused/.test(l.msg))
  t.equal(refused.reason, 'invalid', 'refused')
  t.match(refused.error, /networks\/eth-1\/chainId/, 'with the error of the file, naming the field')
  t.equal(refused.level, 50, 'logged as an error')
  t.equal((await blockNumber()).status, 200, 'the gateway serves on')
  t.ok((await metric(gateway.admin, 'tollgate_upstream_healthy', { network: 'eth-1', node: 'node-b' })) !== undefined, 'with the nodes it had')
  t.equal(await metric(gateway.admin, 'tollgate_upstream_healthy', { network: 'eth-1', node: 'node-a' }), undefined, 'and not the file’s')
  await writeFile(gateway.configPath, JSON.stringify(running))
})

t.test('a change of listen.port is refused as needing a restart; the gateway serves on its port', async (t) => {
  const running = JSON.parse(await readFile(gateway.configPath, 'utf8')) as Record<string, any>
  const port = await freePort()
  await writeFile(
    gateway.configPath,
    JSON.stringify({ ...running, listen: { ...running.listen, port }, networks: { 'eth-1': { chainId: 31337, upstreams: [nodeA] } } }),
  )
  const from = gateway.logs.length
  gateway.signal('SIGHUP')
  const refused = await nextLog(gateway, from, (l) => /^config reloaded|^reload refused/.test(l.msg))
  t.equal(refused.reason, 'restart')
  t.same(refused.fields, ['listen.port'], 'naming the field')
  t.match(refused.msg, /listen\.port cannot change while the gateway runs \(restart it for that\)/, 'and saying it needs a restart')
  t.equal((await blockNumber()).status, 200, 'the gateway serves on its port')
  t.equal(
    await metric(gateway.admin, 'tollgate_upstream_healthy', { network: 'eth-1', node: 'node-a' }),
    undefined,
    'nothing of the file was applied (node A stays out)',
  )
  const elsewhere = await blockNumber(`http://127.0.0.1:${port}/http/eth-1?apikey=${apiKey}`).then(
    () => 'answered',
    (err: { code?: string }) => err.code,
  )
  t.equal(elsewhere, 'ECONNREFUSED', 'nothing listens on the new port')
  t.equal(gateway.logs.filter((l) => l.msg === 'stopped' || l.msg === 'shutting down').length, 0, 'the gateway did not stop')
  await writeFile(gateway.configPath, JSON.stringify(running))
})

t.test('a reload of the plan catalog and limits.queueMs changes a key’s rate at once', async (t) => {
  const running = JSON.parse(await readFile(gateway.configPath, 'utf8')) as Record<string, any>
  const burst = async (n: number): Promise<number[]> => Promise.all(Array.from({ length: n }, () => blockNumber().then((r) => r.status)))
  t.same(new Set(await burst(20)), new Set([200]), 'Tier 3 of the default catalog: 20 calls at once are served')
  const catalog = JSON.parse(await readFile(new URL('../../schemas/catalogs/default.json', import.meta.url), 'utf8')) as { plans: any[] }
  for (const plan of catalog.plans) if (plan.id === 'tier-3') plan.limits.fullRps = 2
  const catalogPath = `${gateway.dataDir}/catalog-slow.json`
  await writeFile(catalogPath, JSON.stringify({ ...catalog, name: 'slow' }))
  await writeFile(gateway.configPath, JSON.stringify({ ...running, plans: { catalog: catalogPath }, limits: { ...running.limits, queueMs: 0 } }))
  const from = gateway.logs.length
  gateway.signal('SIGHUP')
  const reloaded = await nextLog(gateway, from, (l) => /^config reloaded|^reload refused/.test(l.msg))
  t.equal(reloaded.msg, 'config reloaded', JSON.stringify(reloaded))
  t.same(reloaded.changes.plans, { added: [], removed: [], changed: ['tier-3'], catalog: 'slow' }, 'the log names the plan that changed')
  t.same(reloaded.changes.limits, ['limits.queueMs'], 'and the limit')
  const statuses = await burst(20)
  t.ok(statuses.includes(429), `over the new rate, calls are refused at once (${statuses.filter((s) => s === 429).length} of 20 got 429)`)
  t.ok(
    statuses.every((s) => s === 200 || s === 429),
    'and nothing else',
  )
})
