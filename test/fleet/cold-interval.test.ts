import t from 'tap'
import { coldIntervalMs, MAX_REPORTS_PER_SECOND } from '../../actors/fleet/cold-interval.js'

// C_eff = max(C, (N − 1)/M s): what an owner receives, (N − 1)/C_eff reports a second, stays at
// most M however large the fleet grows, and a small fleet keeps C.

t.test('a small fleet keeps C; a large one reports every (N − 1)/M s', async (t) => {
  t.equal(MAX_REPORTS_PER_SECOND, 100)
  t.equal(coldIntervalMs({ coldReportMs: 250, instances: 1 }), 250, 'alone')
  t.equal(coldIntervalMs({ coldReportMs: 250, instances: 26 }), 250, '25 others at 250 ms: exactly 100 a second')
  t.equal(coldIntervalMs({ coldReportMs: 250, instances: 27 }), 260, '26 others: 260 ms')
  t.equal(coldIntervalMs({ coldReportMs: 250, instances: 301 }), 3_000)
  t.equal(coldIntervalMs({ coldReportMs: 250, instances: 301, maxReportsPerSecond: 200 }), 1_500)
  t.equal(coldIntervalMs({ coldReportMs: 5_000, instances: 301 }), 5_000, 'a C longer than (N − 1)/M stays')
})

t.test('reports into an owner a second stay at most M, whatever N', async (t) => {
  for (const m of [10, 100, 1_000]) {
    const rates = [2, 10, 30, 100, 300, 1_000].map((n) => ((n - 1) * 1_000) / coldIntervalMs({ coldReportMs: 250, instances: n, maxReportsPerSecond: m }))
    t.ok(
      rates.every((r) => r <= m + 1e-9),
      `M = ${m}: ${rates.map((r) => r.toFixed(1)).join(', ')} a second at 2 to 1,000 instances`,
    )
  }
})
