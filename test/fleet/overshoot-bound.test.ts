import t, { type Test } from 'tap'
import { HOT_FRACTION, overshootBound } from '../../actors/fleet/hot-accounts.js'
import { ActorFleet } from '../helpers/actor-fleet.js'

// Five instances in one process, each with real key actors, on an in-memory bus under a fake clock
// that the test moves (ActorFleet; a message arrives at the end of the 5 ms step it was sent in): a
// key of 60 calls a second called at four times its rate, spread thin over all five, concentrated on
// one, and in a burst of two seconds' worth on each of the five at once after an idle second, then
// spread thin; with cold reports every sync (C = S = 50 ms) and every 250 ms (the default), and at
// C = 1 s, where the wait for the owners' view shows in the turning second. Over every one-second window the fleet admits at most the bound docs/fleet.md derives
// (overshootBound: the turning bound in the seconds the key turns hot, the hot bound after), and at
// least the plan less ε·limit once the key's first second is past (after the burst: once the debt
// the burst left is paid back, (n - 1)·burst / limit seconds). And a fleet past
// fleet.maxReportsPerSecond, where reports go every C_eff and B must use it.

const N = 5
const RATE = 60
const ACCOUNT = 'acc_hot'
const TICK = 5
const SYNC = 50
const END = 10_000

type Bound = ReturnType<typeof overshootBound>

function fleetOf(cold: number, maxReportsPerSecond?: number): ActorFleet {
  return new ActorFleet({ instances: N, limits: { full: RATE, archive: 0 }, syncMs: SYNC, coldReportMs: cold, maxReportsPerSecond, tickMs: TICK })
}

/** `perSecond` calls a second from `from`, the k-th to instance pick(k). */
function steady(fleet: ActorFleet, perSecond: number, pick: (k: number) => number, from = 0): (now: number) => void {
  let k = 0
  return (now) => {
    if (now < from) return
    const due = Math.floor(((now - from + TICK) * perSecond) / 1_000)
    for (; k < due; k++) fleet.call(pick(k), ACCOUNT)
  }
}

/** Every window from `from`: at most `most`; every window from `settled`: at least the floor. */
function check(t: Test, fleet: ActorFleet, bound: Bound, what: string, o: { from: number; most: number; hotFrom: number; settled: number }): void {
  const floor = RATE * (1 - bound.epsilon)
  const all = fleet.windows(ACCOUNT, o.from, END)
  const hot = fleet.windows(ACCOUNT, o.hotFrom, END)
  const settled = fleet.windows(ACCOUNT, o.settled, END)
  t.comment(
    `${what}: most in a second ${all.max} (at ${all.maxAt} ms), from ${o.hotFrom} ms ${hot.max} (at ${hot.maxAt} ms); fewest from ${o.settled} ms ${settled.min} (at ${settled.minAt} ms); ${fleet.admitted(ACCOUNT)} in ${END / 1000} s`,
  )
  t.ok(all.max <= o.most, `${what}: at most ${all.max} in any second, within ${o.most}`)
  t.ok(hot.max <= bound.hot, `${what}: at most ${hot.max} in any second once hot, within the hot bound ${bound.hot}`)
  t.ok(settled.min >= floor, `${what}: at least ${settled.min} in any second from ${o.settled} ms, the plan less ε (${floor})`)
}

for (const cold of [SYNC, 250, 1_000]) {
  const bound = overshootBound({ limit: RATE, burst: RATE, syncMs: SYNC, coldReportMs: cold, lagMs: TICK, instances: N })
  t.comment(`bound: ${JSON.stringify(bound)}`)

  t.test(`C = ${cold} ms: spread thin over all five`, async (t) => {
    const fleet = fleetOf(cold)
    fleet.run(
      END,
      steady(fleet, 4 * RATE, (k) => k % N),
    )
    // The floor once the first second's overshoot is paid back: a second after the key settled hot.
    check(t, fleet, bound, 'thin', { from: 0, most: bound.turning, hotFrom: bound.settleMs, settled: 1_000 + bound.settleMs })
    t.ok(
      fleet.instances.every((x) => x.fleet.isHot(ACCOUNT)),
      'hot on every instance',
    )
  })

  t.test(`C = ${cold} ms: concentrated on one`, async (t) => {
    const fleet = fleetOf(cold)
    fleet.run(
      END,
      steady(fleet, 4 * RATE, () => 0),
    )
    // One instance's own bucket: the plan itself, a full bucket and a second of refill.
    check(t, fleet, bound, 'one', { from: 0, most: 2 * RATE, hotFrom: 0, settled: 1_000 })
  })

  t.test(`C = ${cold} ms: a burst on all five at once after an idle second, then spread thin`, async (t) => {
    const fleet = fleetOf(cold)
    let burst = false
    const rest = steady(fleet, 4 * RATE, (k) => k % N, 1_000)
    fleet.run(END, (now) => {
      if (now >= 1_000 && !burst) {
        burst = true
        for (let i = 0; i < N; i++) for (let k = 0; k < 2 * RATE; k++) fleet.call(i, ACCOUNT)
      }
      rest(now)
    })
    const paidBack = 1_000 + ((N - 1) * RATE * 1_000) / RATE + bound.settleMs
    check(t, fleet, bound, 'burst', { from: 0, most: bound.turning, hotFrom: 1_000 + bound.settleMs, settled: paidBack })
    // Over the whole run the debt pays the burst back: the plan's burst and its rate, within ε.
    const total = fleet.admitted(ACCOUNT, 1_000, END)
    const plan = RATE + (RATE * (END - 1_000)) / 1_000
    t.ok(Math.abs(total - plan) <= bound.epsilon * RATE, `${total} admitted from the burst on, the plan ${plan} within ε·limit`)
  })
}

// A large fleet: its N − 1 others would send an owner more than fleet.maxReportsPerSecond (M) cold
// reports a second at C, so reports go every C_eff = (N − 1)/M s and the owners hear of a cold key
// that much later; B must use C_eff. Five instances with M = 2 report as 2 × 4 + 1 = 9 with M = 4,
// or 201 with the default M = 100 would: every (5 − 1)/2 = 2 s.
t.test('a large fleet: the bound uses C_eff = max(C, (N − 1)/M)', async (t) => {
  const settings = { limit: RATE, burst: RATE, syncMs: SYNC, coldReportMs: 250, lagMs: TICK, instances: N }
  const small = overshootBound(settings)
  const large = overshootBound({ ...settings, fleetSize: 301 })
  t.equal(small.coldMs, 250, 'five instances at the default M: C itself')
  t.equal(large.coldMs, 3_000, '301 instances at the default M = 100: C_eff = 300/100 s')
  t.equal(large.extra, (N - 1) * (RATE + (RATE * (3_000 + SYNC + 3 * TICK)) / 1_000), 'B with C_eff in place of C')
  t.equal(overshootBound({ ...settings, fleetSize: 301, maxReportsPerSecond: 1_200 }).coldMs, 250, 'an M the fleet stays under: C')

  const M = 2
  const bound = overshootBound({ ...settings, maxReportsPerSecond: M })
  t.comment(`bound at M = ${M}: ${JSON.stringify(bound)}; without C_eff: ${JSON.stringify(small)}`)
  t.equal(bound.coldMs, 2_000, 'C_eff = (5 − 1)/2 s')
  const fleet = fleetOf(250, M)
  t.same(
    fleet.instances.map((x) => x.fleet.coldReportMs),
    Array(N).fill(2_000),
    'every instance reports every C_eff',
  )
  // The key called on the three instances that do not own it, each under θ of its limit, the
  // fleet over it: only the cold reports can tell the owners, so it turns hot within C_eff, not C.
  const owners = fleet.instances[0]!.fleet.ownersOf(ACCOUNT)
  const others = fleet.instances.flatMap((x, i) => (owners.includes(x.id) ? [] : [i]))
  const from = 1_000
  const perSecond = 3 * 25
  // t₀ of the bound: the fleet's last second reaches θ·r (HOT_FRACTION of 60: 30 calls) 400 ms in.
  const t0 = from + (HOT_FRACTION * RATE * 1_000) / perSecond
  const calls = steady(fleet, perSecond, (k) => others[k % others.length]!, from)
  let hotAt = -1
  fleet.run(END, (now) => {
    calls(now)
    if (hotAt < 0 && now >= from && fleet.instances.some((x) => x.fleet.isHot(ACCOUNT))) hotAt = now
  })
  t.comment(`called at ${perSecond}/s on ${others.length} non-owners from ${from} ms, at θ·r from ${t0} ms: hot at ${hotAt} ms, ${hotAt - t0} ms after t₀`)
  t.ok(hotAt - t0 > small.settleMs, `hot ${hotAt - t0} ms after t₀: later than C allows (${small.settleMs} ms), so B needs C_eff`)
  t.ok(hotAt - t0 <= bound.settleMs, `hot within C_eff + S + 3L of t₀ (${bound.settleMs} ms)`)
  check(t, fleet, bound, 'C_eff', { from: 0, most: bound.turning, hotFrom: from + bound.settleMs, settled: from + bound.settleMs + 1_000 })
})
