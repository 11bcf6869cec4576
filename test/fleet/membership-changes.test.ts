import t, { type Test } from 'tap'
import { overshootBound } from '../../actors/fleet/hot-accounts.js'
import { ownersOf } from '../../actors/fleet/owners.js'
import { ActorFleet } from '../helpers/actor-fleet.js'

// An instance joining, leaving, and killed (silent) while a key is called at four times its rate
// over the running instances, the instance that joins or goes being one of the key's owners (the
// hard case: its view of the key's last second is new, or gone). Only its share of the owners
// moves (counted over 1,000 account names, from a surviving instance's view); the key is never
// admitted above the bound of docs/fleet.md, nor does its limit start over (the fewest admitted in
// a second stays near the plan: a reset would show as a second of twice the plan, a limit lost as
// a second of none).

const N = 5
const RATE = 60
const ACCOUNT = 'acc_hot'
const TICK = 5
const SYNC = 50
/** fleet.coldReportMs as configured by default. */
const COLD = 250
const names = Array.from({ length: 1_000 }, (_, i) => `acc_${i}`)

function fleetOf(): ActorFleet {
  return new ActorFleet({ instances: N, limits: { full: RATE, archive: 0 }, syncMs: SYNC, coldReportMs: COLD, tickMs: TICK })
}

/** Four times the rate, round robin over the instances running now. */
function calls(fleet: ActorFleet): (now: number) => void {
  let k = 0
  return (now) => {
    const due = Math.floor(((now + TICK) * 4 * RATE) / 1_000)
    for (; k < due; k++) {
      const running = fleet.instances.map((x, i) => (x.running ? i : -1)).filter((i) => i >= 0)
      fleet.call(running[k % running.length]!, ACCOUNT)
    }
  }
}

/** Each account's owners as instance `i` sees the fleet. */
const ownersSeen = (fleet: ActorFleet, i: number) => names.map((a) => fleet.instances[i]!.fleet.ownersOf(a).join())

function check(t: Test, fleet: ActorFleet, changedAt: number, end: number, instances: number): void {
  const bound = overshootBound({ limit: RATE, burst: RATE, syncMs: SYNC, coldReportMs: COLD, lagMs: TICK, instances })
  const w = fleet.windows(ACCOUNT, 2_000, end)
  t.comment(
    `most in a second ${w.max} (at ${w.maxAt} ms), fewest ${w.min} (at ${w.minAt} ms); the change at ${changedAt} ms; bound ${bound.turning} turning, ${bound.hot} hot`,
  )
  t.ok(w.max <= bound.hot, `at most ${w.max} in any second from 2 s: within the hot bound ${bound.hot}`)
  t.ok(w.min >= RATE * (1 - bound.epsilon), `at least ${w.min} in any second: the plan less ε (${RATE * (1 - bound.epsilon)})`)
}

t.test('an owner of the key joins', async (t) => {
  const fleet = fleetOf()
  const work = calls(fleet)
  fleet.run(3_000, work)
  const ids = fleet.instances.map((x) => x.id)
  let id = 'joiner-0'
  for (let k = 1; ownersOf(ACCOUNT, [...ids, id])[0] !== id; k++) id = `joiner-${k}`
  const before = ownersSeen(fleet, 1)
  fleet.add(id)
  fleet.run(4_000, work)
  const after = ownersSeen(fleet, 1)
  const moved = names.filter((_, k) => before[k] !== after[k])
  t.comment(`owners moved for ${moved.length} of ${names.length} accounts (its share, 2/${N + 1}: ${Math.round((names.length * 2) / (N + 1))})`)
  t.ok(
    moved.every((a) => fleet.instances[1]!.fleet.ownersOf(a).includes(id)),
    'only accounts the newcomer now owns',
  )
  t.ok(moved.length < (names.length * 2 * 1.3) / (N + 1), 'about its share')
  t.equal(fleet.instances[1]!.fleet.ownersOf(ACCOUNT)[0], id, 'it owns the key')
  check(t, fleet, 3_000, 7_000, N + 1)
})

t.test('an owner of the key leaves', async (t) => {
  const fleet = fleetOf()
  const work = calls(fleet)
  fleet.run(3_000, work)
  const gone = fleet.instances.findIndex((x) => x.id === fleet.instances[0]!.fleet.ownersOf(ACCOUNT)[0])
  const survivor = gone === 0 ? 1 : 0
  const before = ownersSeen(fleet, survivor)
  fleet.leave(gone)
  fleet.run(4_000, work)
  const after = ownersSeen(fleet, survivor)
  const moved = names.filter((_, k) => before[k] !== after[k])
  t.comment(`instance ${gone} left; owners moved for ${moved.length} of ${names.length} accounts (its share, 2/${N}: ${(names.length * 2) / N})`)
  t.ok(
    moved.every((_, k) => before[names.indexOf(moved[k]!)]!.split(',').includes(fleet.instances[gone]!.id)),
    'only accounts it owned',
  )
  t.ok(moved.length < (names.length * 2 * 1.3) / N, 'about its share')
  check(t, fleet, 3_000, 7_000, N)
})

t.test('an owner of the key is killed (silent)', async (t) => {
  const fleet = fleetOf()
  const work = calls(fleet)
  fleet.run(3_000, work)
  const gone = fleet.instances.findIndex((x) => x.id === fleet.instances[0]!.fleet.ownersOf(ACCOUNT)[0])
  const survivor = gone === 0 ? 1 : 0
  const before = ownersSeen(fleet, survivor)
  fleet.kill(gone)
  // Past fleet.silentMs (3 s): the others drop it.
  fleet.run(6_000, work)
  const after = ownersSeen(fleet, survivor)
  const moved = names.filter((_, k) => before[k] !== after[k])
  t.comment(`instance ${gone} killed; owners moved for ${moved.length} of ${names.length} accounts (its share, 2/${N}: ${(names.length * 2) / N})`)
  t.equal(fleet.instances[survivor]!.fleet.members().length, N - 1, 'dropped as silent')
  t.ok(
    moved.every((a) => before[names.indexOf(a)]!.split(',').includes(fleet.instances[gone]!.id)),
    'only accounts it owned',
  )
  t.ok(moved.length < (names.length * 2 * 1.3) / N, 'about its share')
  check(t, fleet, 3_000, 9_000, N)
})
