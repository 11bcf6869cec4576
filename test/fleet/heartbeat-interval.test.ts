import t from 'tap'
import { heartbeatIntervalMs, MAX_HEARTBEATS_PER_SECOND, silenceMs } from '../../actors/fleet/heartbeat-interval.js'

// max(heartbeatMs, N/H s): what an instance hears of heartbeats, N per interval (its own echo
// included), stays at most H a second however large the fleet grows; a fleet of up to H keeps
// heartbeatMs; the silence stretches by as much as the heartbeat.

t.test('a fleet of up to H keeps heartbeatMs; a larger one beats every N/H s', async (t) => {
  t.equal(MAX_HEARTBEATS_PER_SECOND, 100)
  t.equal(heartbeatIntervalMs({ heartbeatMs: 1_000, instances: 1 }), 1_000, 'alone')
  t.equal(heartbeatIntervalMs({ heartbeatMs: 1_000, instances: 0 }), 1_000, 'no one heard yet')
  t.equal(heartbeatIntervalMs({ heartbeatMs: 1_000, instances: 100 }), 1_000, '100 a second: exactly H')
  t.equal(heartbeatIntervalMs({ heartbeatMs: 1_000, instances: 101 }), 1_010)
  t.equal(heartbeatIntervalMs({ heartbeatMs: 1_000, instances: 300 }), 3_000)
  t.equal(heartbeatIntervalMs({ heartbeatMs: 1_000, instances: 300, maxHeartbeatsPerSecond: 200 }), 1_500)
  t.equal(heartbeatIntervalMs({ heartbeatMs: 5_000, instances: 300 }), 5_000, 'a heartbeatMs longer than N/H stays')
  t.equal(heartbeatIntervalMs({ heartbeatMs: 1_000, instances: 7, maxHeartbeatsPerSecond: 3 }), 2_334, 'rounded up, never above H')
})

t.test('heartbeats into an instance a second stay at most H, whatever N', async (t) => {
  for (const h of [3, 20, 100, 1_000]) {
    const rates = [1, 2, 10, 30, 100, 300, 1_000, 3_000].map(
      (n) => (n * 1_000) / heartbeatIntervalMs({ heartbeatMs: 1_000, instances: n, maxHeartbeatsPerSecond: h }),
    )
    t.ok(
      rates.every((r) => r <= h + 1e-9),
      `H = ${h}: ${rates.map((r) => r.toFixed(1)).join(', ')} a second at 1 to 3,000 instances`,
    )
  }
})

t.test('the silence stretches as the heartbeat does: the same heartbeats of margin at any size', async (t) => {
  const s = { heartbeatMs: 1_000, silentMs: 3_000 }
  t.equal(silenceMs(s, 1_000), 3_000)
  t.equal(silenceMs(s, 500), 3_000, 'never shorter than silentMs')
  t.equal(silenceMs(s, 3_000), 9_000, '300 instances at H = 100: a dead one is dropped 9 s after its last heartbeat')
  t.equal(silenceMs({ heartbeatMs: 200, silentMs: 60_000 }, 300), 90_000)
  for (const n of [1, 50, 100, 101, 250, 300, 1_000]) {
    const every = heartbeatIntervalMs({ heartbeatMs: 1_000, instances: n })
    t.equal(silenceMs(s, every) / every, 3, `${n} instances: silent after 3 intervals of ${every} ms`)
  }
})
