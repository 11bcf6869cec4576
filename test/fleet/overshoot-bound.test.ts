import t, { type Test } from 'tap'
import { overshootBound } from '../../actors/fleet/hot-accounts.js'
import { ActorFleet } from '../helpers/actor-fleet.js'

// Five instances in one process, each with real key actors, on an in-memory bus under a fake clock
// that the test moves (ActorFleet; a message arrives at the end of the 5 ms step it was sent in): a
// key of 60 calls a second called at four times its rate, spread thin over all five, concentrated on
// one, and in a burst of two seconds' worth on each of the five at once after an idle second, then
// spread thin; with cold reports every sync (C = S = 50 ms) and every 250 ms (the default), and at
// C = 1 s, where the wait for the owners' view shows in the turning second. Over every one-second window the fleet admits at most the bound docs/fleet.md derives
// (overshootBound: the turning bound in the seconds the key turns hot, the hot bound after), and at
// least the plan less ε·limit once the key's first second is past (after the burst: once the debt
// the burst left is paid back, (n - 1)·burst / limit seconds).

const N = 5
const RATE = 60
const ACCOUNT = 'acc_hot'
const TICK = 5
const SYNC = 50
const END = 10_000

type Bound = ReturnType<typeof overshootBound>

function fleetOf(cold: number): ActorFleet {
  return new ActorFleet({ instances: N, limits: { full: RATE, archive: 0 }, syncMs: SYNC, coldReportMs: cold, tickMs: TICK })
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
