import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { startAnvil } from '../../harness/anvil.js'
import { startNats } from '../../harness/nats-server.js'
import { within } from '../helpers/eventually.js'
import { rpc, startTestGateway } from '../helpers/gateway.js'
import { PROMETHEUS, startPrometheus, type RunningPrometheus } from '../helpers/prometheus.js'
import { connectWs, tryUpgrade } from '../helpers/ws-client.js'

// Every panel of deploy/monitoring/grafana-dashboard.json shows something once what it is about
// happens. A real Prometheus scrapes one real gateway (with NATS, so that it has a fleet) every
// second; the test first reads each query on the quiet gateway (the panels that stay empty then
// are the ones docs/operations.md lists), then drives the gateway through calls (some answered
// 429 and 503), a WebSocket subscription to newHeads while blocks are mined, refused upgrades,
// repeated cacheable calls and a node killed, and waits for each query to return what its panel
// is there to show. Last, NATS is stopped and the outbox fills. The queries are read from the
// dashboard file, with Grafana's variables given the values Grafana would give them.

const ROOT = join(import.meta.dirname, '..', '..')
const DASHBOARD = join(ROOT, 'deploy', 'monitoring', 'grafana-dashboard.json')
const OPERATIONS = join(ROOT, 'docs', 'operations.md')

const INTERVAL_S = 1
/**
 * `$__rate_interval` as Grafana computes it: the step between points plus a scrape interval, at
 * least four scrape intervals. The dashboard's 3 hours at about a thousand points is a point every
 * 10 s.
 */
const RATE_INTERVAL = `${Math.max(10 + INTERVAL_S, 4 * INTERVAL_S)}s`
/** The longest wait for one query to show its subject (scrapes, then rate() over its window). */
const SHOWS_WITHIN_MS = 20_000

type Series = Array<{ metric: Record<string, string>; value: [number, string] }>
const value = (s: Series[number]): number => Number(s.value[1])
const anySeries = (s: Series): boolean => s.length > 0
const somePositive = (s: Series): boolean => s.some((x) => value(x) > 0)

/**
 * What each panel must show once the test has driven its subject, one check per query (in the
 * panel's order). A panel of the dashboard missing here fails the test: a new panel needs a line.
 */
const SHOWS: Record<string, Array<{ what: string; check: (s: Series) => boolean }>> = {
  'HTTP answers by status': [{ what: 'answers 200, 429 and 503', check: (s) => ['200', '429', '503'].every((st) => s.some((x) => x.metric.status === st)) }],
  '5xx share': [{ what: 'a share above 0', check: somePositive }],
  Throttled: [
    { what: '429 answers on eth-1', check: (s) => s.some((x) => x.metric.network === 'eth-1' && value(x) > 0) },
    { what: 'WebSocket messages throttled', check: (s) => s.some((x) => x.metric.outcome === 'throttled' && value(x) > 0) },
  ],
  'Nodes healthy': [
    {
      what: 'the live node at 1 and the killed one at 0',
      check: (s) => s.some((x) => x.metric.node === 'live' && value(x) === 1) && s.some((x) => x.metric.node === 'killed' && value(x) === 0),
    },
  ],
  'Nodes out, by reason': [
    { what: 'eth-2 out for failures', check: (s) => s.some((x) => x.metric.network === 'eth-2' && x.metric.reason === 'failures' && value(x) === 1) },
  ],
  'Node latency p95': [
    { what: 'a latency of the live node', check: (s) => s.some((x) => x.metric.node === 'live' && value(x) > 0 && Number.isFinite(value(x))) },
  ],
  'Calls to nodes and failures': [
    { what: 'calls to the live node', check: (s) => s.some((x) => x.metric.node === 'live' && value(x) > 0) },
    { what: 'failures of the killed node', check: (s) => s.some((x) => x.metric.node === 'killed' && value(x) > 0) },
  ],
  'Blocks behind': [{ what: 'a value per node', check: (s) => s.length >= 2 }],
  'Calls waiting on nodes': [{ what: 'a value per node', check: (s) => s.length >= 2 }],
  'Event log connected': [{ what: 'connected: 1', check: (s) => s.some((x) => value(x) === 1) }],
  'Outbox backlog': [{ what: 'a value (the backlog itself is shown with NATS stopped, below)', check: anySeries }],
  'Projection checkpoint': [{ what: 'a position above 0', check: somePositive }],
  'Fleet instances': [{ what: 'at least this instance', check: (s) => s.some((x) => value(x) >= 1) }],
  'Share of each limit': [{ what: 'a share above 0', check: somePositive }],
  'Key actors in memory': [{ what: 'keys in memory', check: somePositive }],
  'WebSocket connections': [
    { what: 'a connection open on eth-1', check: (s) => s.some((x) => x.metric.network === 'eth-1' && value(x) >= 1) },
    { what: 'an upstream subscription on eth-1', check: (s) => s.some((x) => x.metric.network === 'eth-1' && value(x) >= 1) },
  ],
  'WebSocket upgrades refused': [{ what: 'refusals', check: somePositive }],
  'Cache hit ratio': [{ what: 'a ratio above 0', check: somePositive }],
  CPU: [{ what: 'CPU used', check: somePositive }],
  'Resident memory': [{ what: 'memory', check: somePositive }],
  'Event loop lag p99': [{ what: 'a value', check: anySeries }],
}

/**
 * The panels that show nothing (no series, or only NaN) on a quiet gateway: running with NATS,
 * its nodes healthy, keys made, no call yet; a panel of which only some queries show nothing, with
 * their refIds. Each is in docs/operations.md's list with the reason.
 */
const EMPTY_WHEN_QUIET = ['HTTP answers by status', '5xx share', 'Throttled (A)', 'WebSocket connections (A)', 'WebSocket upgrades refused', 'Cache hit ratio']

interface Panel {
  title: string
  exprs: string[]
  refIds: string[]
}

function dashboardPanels(): Panel[] {
  const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8'))
  const out: Panel[] = []
  const walk = (list: any[]): void => {
    for (const p of list ?? []) {
      if (p.type !== 'row') out.push({ title: p.title, exprs: (p.targets ?? []).map((x: any) => x.expr), refIds: (p.targets ?? []).map((x: any) => x.refId) })
      walk(p.panels)
    }
  }
  walk(dashboard.panels)
  return out
}

/** A dashboard query as Grafana sends it: every instance (the variable's "All"), its rate window. */
function asSent(expr: string): string {
  return expr.replaceAll('$__rate_interval', RATE_INTERVAL).replaceAll('$instance', '.*')
}

/** Series a query returns that Grafana would draw (NaN draws nothing: a ratio of two zero rates). */
async function drawn(prom: RunningPrometheus, expr: string): Promise<Series> {
  return ((await prom.query(asSent(expr))) as Series).filter((x) => !Number.isNaN(value(x)))
}

/**
 * Wait (bounded) until `expr` shows what `check` wants; the failed assertion carries the query
 * and its last answer (or Prometheus's error: a query that does not parse fails its panel only).
 */
async function shows(t: Test, prom: RunningPrometheus, expr: string, what: string, check: (s: Series) => boolean): Promise<void> {
  let last: Series | string = []
  const shown = await within(
    SHOWS_WITHIN_MS,
    async () => {
      try {
        return check((last = await drawn(prom, expr)))
      } catch (err) {
        last = (err as Error).message
        return false
      }
    },
    200,
  )
  t.ok(shown !== undefined, what, { expr: asSent(expr), last })
}

const panels = dashboardPanels()

t.test('the dashboard file: every panel has a query and a line here', async (t) => {
  t.ok(panels.length >= 20, `${panels.length} panels`)
  for (const p of panels) {
    t.ok(p.exprs.length > 0, `${p.title}: a query`)
    t.equal(SHOWS[p.title]?.length, p.exprs.length, `${p.title}: one check per query`)
  }
  t.same(Object.keys(SHOWS).sort(), panels.map((p) => p.title).sort(), 'no check for a panel the dashboard does not have')
  const docs = readFileSync(OPERATIONS, 'utf8')
  for (const entry of EMPTY_WHEN_QUIET) {
    const title = entry.replace(/ \([A-Z]+\)$/, '')
    t.ok(docs.includes(`**${title}**`), `docs/operations.md says why ${entry} is empty on a quiet gateway`)
  }
})

/**
 * The pause between two rounds of background traffic: it keeps the load light, it decides no
 * result. Every check waits for what Prometheus returns (`shows`, bounded), so a slower machine
 * only makes fewer rounds; each round alone produces every subject (the Free key's three calls in
 * one round already pass its 2 a second).
 */
const paced = (): Promise<void> => new Promise((r) => setTimeout(r, 100))

if (PROMETHEUS === undefined) {
  t.comment('prometheus is not installed (Debian: apt-get install prometheus, as .ci/run does): the panels are not tried against it')
} else {
  const nats = await startNats()
  t.teardown(() => nats.stop())
  const live = await startAnvil()
  t.teardown(() => live.stop())
  const doomed = await startAnvil()
  t.teardown(() => doomed.stop())
  const tg = await startTestGateway(t, {
    nats: nats.url,
    // Set B: its Free plan allows 2 calls a second, and as many WebSocket messages.
    catalog: 'set-b',
    networks: {
      'eth-1': { chainId: 31337, upstreams: [{ url: live.url, ws: live.wsUrl, kind: 'full', name: 'live' }] },
      'eth-2': { chainId: 31337, upstreams: [{ url: doomed.url, kind: 'full', name: 'killed' }] },
    },
    // The killed node is taken out after three failed polls a second apart, and probed every 2 s.
    config: { health: { pollMs: 1000, cooldownMs: 2000 } },
  })
  const pro = await tg.createKey('pro')
  const free = await tg.createKey('free', [{ network: 'eth-1', kind: 'full' }])
  const prom = await startPrometheus({ targets: [new URL(tg.gateway.admin).host], intervalS: INTERVAL_S })
  t.teardown(() => prom.stop())

  t.test('on a quiet gateway, the panels listed in the docs are the ones that show nothing', async (t) => {
    // Three scrapes: enough for rate() to have two samples in its window.
    t.ok(
      await within(30_000, async () => (await prom.query('count_over_time(up{job="tollgate"}[1m]) >= 3')).length === 1),
      'Prometheus has scraped the gateway three times',
    )
    const empty: string[] = []
    for (const p of panels) {
      const shown = await Promise.all(p.exprs.map((e) => drawn(prom, e)))
      const none = p.refIds.filter((_, i) => shown[i]!.length === 0)
      if (none.length === p.exprs.length) empty.push(p.title)
      else if (none.length > 0) empty.push(`${p.title} (${none.join(', ')})`)
    }
    t.same(empty, EMPTY_WHEN_QUIET, 'empty: the panels docs/operations.md lists')
  })

  t.test('each panel shows its subject once it happens', async (t) => {
    const call = (url: string, method: string, apiKey: string) => rpc(url, { jsonrpc: '2.0', id: 1, method, params: [] }, { apiKey })
    // A client subscribed to newHeads, and one whose messages outrun its plan's 2 a second.
    const ws = await connectWs(`${tg.wsUrl('eth-1')}?apikey=${pro.apiKey}`)
    t.teardown(() => ws.close())
    const sub = await ws.call({ jsonrpc: '2.0', id: 'sub', method: 'eth_subscribe', params: ['newHeads'] })
    t.type(sub.result, 'string', 'subscribed to newHeads')
    const chatty = await connectWs(`${tg.wsUrl('eth-1')}?apikey=${free.apiKey}`)
    t.teardown(() => chatty.close())

    // Traffic until the end of this subtest, paced (about ten rounds a second): calls served,
    // cacheable calls repeated, calls over the Free key's limit, calls to the network whose node
    // is killed, WebSocket messages over the limit, upgrades without a key, a block mined.
    let driving = true
    const statuses = new Map<number, number>()
    const traffic = (async () => {
      for (let round = 0; driving; round++) {
        const answers = await Promise.all([
          call(tg.url('eth-1'), 'eth_blockNumber', pro.apiKey),
          call(tg.url('eth-1'), 'eth_chainId', pro.apiKey),
          call(tg.url('eth-2'), 'eth_blockNumber', pro.apiKey),
          call(tg.url('eth-1'), 'eth_blockNumber', free.apiKey),
          call(tg.url('eth-1'), 'eth_blockNumber', free.apiKey),
          call(tg.url('eth-1'), 'eth_blockNumber', free.apiKey),
          tryUpgrade(tg.wsUrl('eth-1')),
          live.rpc('evm_mine'),
        ])
        for (const a of answers.slice(0, 6) as Array<{ status: number }>) statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1)
        for (let i = 0; i < 3; i++) chatty.send({ jsonrpc: '2.0', id: `${round}-${i}`, method: 'eth_chainId', params: [] })
        await paced()
      }
    })()
    t.teardown(async () => {
      driving = false
      await traffic
    })

    await doomed.kill()
    t.ok(await ws.nextNotification(sub.result), 'a newHeads notification arrives as blocks are mined')

    for (const p of panels) {
      const checks = SHOWS[p.title]!
      for (const [i, expr] of p.exprs.entries()) {
        await shows(t, prom, expr, `${p.title}: ${checks[i]!.what}`, checks[i]!.check)
      }
    }
    driving = false
    await traffic
    t.comment(`answers while driving: ${JSON.stringify(Object.fromEntries(statuses))}`)
  })

  t.test('with NATS stopped, the event log panel shows it cut off and the outbox backlog grows', async (t) => {
    const panel = (title: string): string => panels.find((p) => p.title === title)!.exprs[0]!
    await nats.kill()
    t.teardown(() => nats.restart())
    // Calls keep being served, and their usage events wait in the outbox.
    let driving = true
    const traffic = (async () => {
      while (driving) {
        await rpc(tg.url('eth-1'), { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }, { apiKey: pro.apiKey })
        await paced()
      }
    })()
    t.teardown(async () => {
      driving = false
      await traffic
    })
    for (const [title, what, check] of [
      ['Event log connected', 'cut off: 0', (s: Series) => s.some((x) => value(x) === 0)],
      ['Outbox backlog', 'events waiting', somePositive],
    ] as const) {
      await shows(t, prom, panel(title), `${title}: ${what}`, check)
    }
  })
}
