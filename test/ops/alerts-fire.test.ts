import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { parse, stringify } from 'yaml'
import { startAnvil } from '../../harness/anvil.js'
import { startNats } from '../../harness/nats-server.js'
import { within } from '../helpers/eventually.js'
import { startGarbageNode } from '../helpers/garbage-node.js'
import { rpc, startTestGateway } from '../helpers/gateway.js'
import { metric } from '../helpers/metrics.js'
import { PROMETHEUS, startPrometheus, type RunningPrometheus } from '../helpers/prometheus.js'

// The alerts of deploy/monitoring/alerts.yml tried as an operator runs them: a real Prometheus
// scraping a real gateway's admin listener every second and evaluating the rules every second.
// Each alert must fire within its `for` plus two evaluations and a scrape of the gateway showing
// the failure, stay firing while the failure lasts, and resolve when it ends. Before issue 42,
// TollgateNoHealthyNode stayed pending while the only node was dead: each probe of the node read
// as healthy for a scrape and restarted its minute.
//
// The rules are the file's, with shorter `for` (a minute each would make this test minutes long):
// the expressions are the same, and the real file's holds are checked by promtool against
// synthetic series in test/ops/alert-rules.test.ts. One Prometheus and one gateway serve every
// subtest. The times measured are written beside each alert in docs/operations.md.

const INTERVAL_S = 1
const FOR_S: Record<string, number> = {
  TollgateNodeOut: 8,
  TollgateNoHealthyNode: 8,
  TollgateNatsDisconnected: 5,
  TollgateHigh5xxRate: 5,
  TollgateKeyThrottled: 10,
}
/** The longest a rule may take to fire once /metrics shows its condition: a scrape, then its `for` between two evaluations. */
const fireBoundMs = (alert: string, scrapes = 1): number => (FOR_S[alert]! + 2 * INTERVAL_S + scrapes * INTERVAL_S) * 1000

function rulesWithShortHolds(): string {
  const doc = parse(readFileSync(join(import.meta.dirname, '..', '..', 'deploy', 'monitoring', 'alerts.yml'), 'utf8'))
  for (const group of doc.groups) for (const rule of group.rules) if (rule.for !== undefined) rule.for = `${FOR_S[rule.alert]}s`
  return stringify(doc)
}

if (PROMETHEUS === undefined) {
  t.plan(0, 'prometheus is not installed (Debian: apt-get install prometheus, as .ci/run does): the alerts are not tried end to end')
} else {
  const nats = await startNats()
  t.teardown(() => nats.stop())
  const anvil = await startAnvil()
  t.teardown(() => anvil.stop())
  const garbage = await startGarbageNode()
  t.teardown(() => garbage.close())
  const tg = await startTestGateway(t, {
    nats: nats.url,
    networks: {
      'eth-1': { chainId: 31337, upstreams: [{ url: anvil.url, kind: 'full', name: 'only' }] },
      // The garbage node answers 0x1 to everything while it is `ok`: chain 1.
      'bad-1': { chainId: 1, upstreams: [{ url: garbage.url, kind: 'full', name: 'garbage' }] },
    },
    // The default cooldown's probes, closer together: a dead node is probed every 2 to 3 s.
    config: { health: { pollMs: 1000, cooldownMs: 2000 }, cache: { enabled: false } },
  })
  const { apiKey } = await tg.createKey('tier-3')
  const admin = tg.gateway.admin
  const prom = await startPrometheus({ targets: [new URL(admin).host], rules: rulesWithShortHolds(), intervalS: INTERVAL_S })
  t.teardown(() => prom.stop())

  const stateOf = async (p: RunningPrometheus, alert: string, labels: Record<string, string> = {}): Promise<string> => {
    const found = (await p.alerts()).find((a) => a.labels.alertname === alert && Object.entries(labels).every(([k, v]) => a.labels[k] === v))
    return found?.state ?? 'inactive'
  }
  const measured: string[] = []
  t.teardown(() => {
    for (const line of measured) t.comment(line)
  })

  t.test('TollgateNoHealthyNode fires when the only node dies, stays firing across its probes, resolves when it is back', async (t) => {
    const node = { network: 'eth-1', node: 'only' }
    t.ok(
      await within(30_000, async () => (await prom.query('tollgate_upstream_healthy{network="eth-1"} == 1')).length === 1),
      'Prometheus scrapes the gateway: the node is healthy',
    )
    t.equal(await stateOf(prom, 'TollgateNoHealthyNode'), 'inactive')

    const killed = Date.now()
    await anvil.kill()
    const outMs = await within(30_000, async () => (await metric(admin, 'tollgate_upstream_healthy', node)) === 0)
    t.ok(outMs !== undefined, 'the gateway takes the dead node out (three failed polls)')
    const out = Date.now()
    const fireMs = await within(
      fireBoundMs('TollgateNoHealthyNode'),
      async () => (await stateOf(prom, 'TollgateNoHealthyNode', { network: 'eth-1' })) === 'firing',
      100,
    )
    t.ok(fireMs !== undefined, `firing within ${fireBoundMs('TollgateNoHealthyNode')} ms of the node out on /metrics (for ${FOR_S.TollgateNoHealthyNode} s)`)
    measured.push(`TollgateNoHealthyNode (for ${FOR_S.TollgateNoHealthyNode} s): out on /metrics ${out - killed} ms after the kill, firing ${fireMs} ms later`)

    // The failure issue 42 is about: a probe of the node must not take the alert back to pending.
    const states = new Set<string>()
    const probes = (await metric(admin, 'tollgate_upstream_probes_total', node)) ?? 0
    const probed = await within(20_000, async () => {
      states.add(await stateOf(prom, 'TollgateNoHealthyNode', { network: 'eth-1' }))
      return ((await metric(admin, 'tollgate_upstream_probes_total', node)) ?? 0) >= probes + 2
    })
    t.ok(probed !== undefined, 'two probes of the dead node failed meanwhile')
    t.same([...states], ['firing'], 'the alert stayed firing across them')
    t.ok(
      await within(
        fireBoundMs('TollgateNodeOut'),
        async () => (await stateOf(prom, 'TollgateNodeOut', { node: 'only', reason: 'failures' })) === 'firing',
        100,
      ),
      'TollgateNodeOut fires too, with the reason',
    )

    const restarted = Date.now()
    await anvil.restart()
    const resolveMs = await within(30_000, async () => (await stateOf(prom, 'TollgateNoHealthyNode')) === 'inactive', 100)
    t.ok(resolveMs !== undefined, 'resolved once the node answers again')
    measured.push(`TollgateNoHealthyNode: resolved ${Date.now() - restarted} ms after the node was started again`)
  })

  t.test('TollgateNatsDisconnected fires when NATS is stopped and resolves when it is back', async (t) => {
    t.equal(await stateOf(prom, 'TollgateNatsDisconnected'), 'inactive')
    const killed = Date.now()
    await nats.kill()
    t.ok(await within(30_000, async () => (await metric(admin, 'tollgate_event_log_connected')) === 0), 'the gateway says it is cut off')
    const down = Date.now()
    const fireMs = await within(fireBoundMs('TollgateNatsDisconnected'), async () => (await stateOf(prom, 'TollgateNatsDisconnected')) === 'firing', 100)
    t.ok(fireMs !== undefined, `firing within ${fireBoundMs('TollgateNatsDisconnected')} ms of the gauge at 0 (for ${FOR_S.TollgateNatsDisconnected} s)`)
    measured.push(
      `TollgateNatsDisconnected (for ${FOR_S.TollgateNatsDisconnected} s): 0 on /metrics ${down - killed} ms after the kill, firing ${fireMs} ms later`,
    )

    const restarted = Date.now()
    await nats.restart()
    t.ok(await within(30_000, async () => (await stateOf(prom, 'TollgateNatsDisconnected')) === 'inactive', 100), 'resolved once NATS is back')
    measured.push(`TollgateNatsDisconnected: resolved ${Date.now() - restarted} ms after NATS was started again`)
  })

  t.test('TollgateHigh5xxRate fires under a node that answers garbage', async (t) => {
    t.equal(await stateOf(prom, 'TollgateHigh5xxRate'), 'inactive')
    garbage.mode = 'html-500'
    // Clients keep calling the broken network (about 20 calls a second: paced so as not to load
    // the shared machine) until the alert fires.
    let calling = true
    let firstFailure: number | undefined
    const statuses = new Map<number, number>()
    const calls = (async () => {
      for (let id = 1; calling; id++) {
        const { status } = await rpc(tg.url('bad-1'), { jsonrpc: '2.0', id, method: 'eth_blockNumber', params: [] }, { apiKey })
        statuses.set(status, (statuses.get(status) ?? 0) + 1)
        if (status >= 500) firstFailure ??= Date.now()
        await new Promise((r) => setTimeout(r, 50))
      }
    })()
    t.teardown(async () => {
      calling = false
      await calls
    })
    t.ok(await within(10_000, () => firstFailure !== undefined), 'the gateway answers 5xx')
    const started = firstFailure!
    // Two scrapes: rate() needs the counter's samples before and after the first 5xx.
    const fired = await within(fireBoundMs('TollgateHigh5xxRate', 2), async () => (await stateOf(prom, 'TollgateHigh5xxRate')) === 'firing', 100)
    t.ok(fired !== undefined, `firing within ${fireBoundMs('TollgateHigh5xxRate', 2)} ms of the first 5xx (for ${FOR_S.TollgateHigh5xxRate} s)`)
    calling = false
    await calls
    measured.push(
      `TollgateHigh5xxRate (for ${FOR_S.TollgateHigh5xxRate} s): firing ${Date.now() - started} ms after the first 5xx (answers: ${JSON.stringify(Object.fromEntries(statuses))})`,
    )
    garbage.mode = 'ok'
  })
}
