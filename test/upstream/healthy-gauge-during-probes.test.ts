import t from 'tap'
import { anvilGateway } from '../helpers/anvil-gateway.js'
import { within } from '../helpers/eventually.js'
import { metric, metricsPage, readMetric } from '../helpers/metrics.js'

// `tollgate_upstream_healthy` is what TollgateNoHealthyNode reads: "0 for a minute" must mean the
// calls of that minute had no node. A node that is out is probed now and then (the head poll, or
// a client's call once its cooldown is over); if the gauge read 1 between the end of a cooldown
// and the probe that fails, every scrape that caught it restarted the alert's minute, and the
// alert of a network that was down stayed pending (seen: still pending after 183 s, issue 42).
// Here the only node is killed and /metrics is read over and over across probes: the gauge must
// stay 0 throughout, the node stay out, and the gauge come back once the node answers again.

const node = { network: 'eth-1', node: 'only' }
const PROBES = 5

const { anvil, tg } = await anvilGateway(t, {
  names: ['only'],
  nodeWs: false,
  plan: null,
  // A poll every 200 ms, each one a probe once a 50 ms cooldown is over: five probes take about a
  // second, and the cooldown ends long before each poll (the window where the gauge flickered).
  config: { health: { pollMs: 200, cooldownMs: 50, failureThreshold: 3 }, cache: { enabled: false } },
})
const admin = tg.gateway.admin

t.test('the healthy gauge of a dead node stays 0 across its probes, and says 1 once it is back', async (t) => {
  t.equal(await metric(admin, 'tollgate_upstream_healthy', node), 1, 'the node is healthy while it answers')

  await anvil.kill()
  t.ok(
    await within(20_000, async () => (await metric(admin, 'tollgate_upstream_out', { ...node, reason: 'failures' })) === 1),
    'killed, the node is taken out after its failed polls',
  )

  // Each probe is one failed poll (eth_blockNumber and eth_chainId, one batch: two failures). A
  // poll that comes before the cooldown is over fails too without being a probe (a late timer on
  // a loaded machine), so the probes are counted by their own counter, not by the failures.
  const failuresAtOut = (await metric(admin, 'tollgate_upstream_failures_total', node)) ?? 0
  const probesAtOut = (await metric(admin, 'tollgate_upstream_probes_total', node)) ?? 0
  const healthy: number[] = []
  const out: number[] = []
  const probed = await within(
    30_000,
    async () => {
      const page = await metricsPage(admin)
      healthy.push(readMetric(page, 'tollgate_upstream_healthy', node) ?? -1)
      out.push(readMetric(page, 'tollgate_upstream_out', { ...node, reason: 'failures' }) ?? -1)
      return (readMetric(page, 'tollgate_upstream_probes_total', node) ?? 0) >= probesAtOut + PROBES
    },
    5,
  )
  t.ok(probed !== undefined, `${PROBES} probes of the dead node failed while /metrics was read ${healthy.length} times`)
  t.ok(healthy.length >= PROBES, 'the gauge was read across the probes')
  t.equal(healthy.join(''), '0'.repeat(healthy.length), 'tollgate_upstream_healthy stayed 0 across the probes (each 1 would restart the alert’s minute)')
  t.equal(out.join(''), '1'.repeat(out.length), 'tollgate_upstream_out stayed 1 across them')
  // The probes are their own metrics: a counter (no scrape misses one) and the half-open gauge.
  const probes = ((await metric(admin, 'tollgate_upstream_probes_total', node)) ?? 0) - probesAtOut
  const failures = ((await metric(admin, 'tollgate_upstream_failures_total', node)) ?? 0) - failuresAtOut
  t.ok(failures >= 2 * probes, `each of the ${probes} probes failed (${failures} failures: two calls a poll)`)
  t.ok(
    await within(10_000, async () => (await metric(admin, 'tollgate_upstream_half_open', node)) === 1),
    'between two probes, past its cooldown, the node is half-open',
  )

  await anvil.restart()
  t.ok(
    await within(20_000, async () => (await metric(admin, 'tollgate_upstream_healthy', node)) === 1),
    'back: the first probe that succeeds lets it in, and the gauge says 1',
  )
  t.equal(await metric(admin, 'tollgate_upstream_out', { ...node, reason: 'failures' }), 0, 'and it is no longer out')
  t.equal(await metric(admin, 'tollgate_upstream_half_open', node), 0, 'nor half-open')
})
