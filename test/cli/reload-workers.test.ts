import t from 'tap'
import { readFile, writeFile } from 'node:fs/promises'
import type { Anvil } from '../../harness/anvil.js'
import { startAnvils } from '../helpers/anvil-gateway.js'
import { runCli } from '../helpers/cli.js'
import { TEST_SECRET } from '../helpers/gateway.js'
import { startWorkersGateway } from '../helpers/gateway-process.js'
import { metric } from '../helpers/metrics.js'

// With `workers`, `tollgate reload` finds the supervisor (it holds the data folder) and the
// supervisor passes the signal on: each worker applies the file and says so, its own admin port
// (admin.listen.port + its index) not taken for a change of admin.listen.

t.setTimeout(300_000)
const env = { TOLLGATE_SECRET: TEST_SECRET }
const [a, b] = (await startAnvils(t, {}, {})) as [Anvil, Anvil]
const nodeA = { url: a.url, kind: 'full', name: 'node-a' }
const nodeB = { url: b.url, kind: 'full', name: 'node-b' }
const { gateway: gw, adminPort } = await startWorkersGateway(t, { workers: 2, config: { networks: { 'eth-1': { chainId: 31337, upstreams: [nodeA] } } } })

t.test('tollgate reload reaches every worker through the supervisor', async (t) => {
  const running = JSON.parse(await readFile(gw.configPath, 'utf8')) as Record<string, any>
  await writeFile(gw.configPath, JSON.stringify({ ...running, networks: { 'eth-1': { chainId: 31337, upstreams: [nodeA, nodeB] } } }))
  const from = gw.logs.length
  const sent = await runCli(['reload', '--config', gw.configPath], env)
  t.equal(sent.code, 0, sent.stderr)
  t.match(sent.last, { role: /^a gateway supervising 2 workers/ }, 'the supervisor holds the data folder and is signalled')
  const passed = await gw.waitForLog((l) => gw.logs.indexOf(l) >= from && l.msg === 'reload passed on to the workers', 60_000)
  t.equal(passed.workers, 2, 'to both workers')
  for (const worker of [0, 1]) {
    const line = await gw.waitForLog((l) => gw.logs.indexOf(l) >= from && l.worker === worker && /^config reloaded|^reload refused/.test(l.msg), 60_000)
    t.equal(line.msg, 'config reloaded', `worker ${worker} applied it (${JSON.stringify(line.fields ?? line.error ?? '')})`)
    t.same(line.changes?.nodes, [{ network: 'eth-1', added: ['node-b'], removed: [], changed: [] }], `worker ${worker} says node B came`)
    t.not(
      await metric(`http://127.0.0.1:${adminPort + worker}`, 'tollgate_upstream_healthy', { network: 'eth-1', node: 'node-b' }),
      undefined,
      `worker ${worker} has node B`,
    )
  }
})
