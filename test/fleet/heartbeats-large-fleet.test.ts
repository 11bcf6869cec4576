import t from 'tap'
import { heartbeatIntervalMs, silenceMs } from '../../actors/fleet/heartbeat-interval.js'
import { ActorFleet } from '../helpers/actor-fleet.js'

// A fleet larger than fleet.maxHeartbeatsPerSecond (H) under a clock the test moves: 60 instances
// at H = 12 are what 500 are at the default H = 100 (heartbeats every N/H = 5 s, silence 3 × 5 s).
// What an instance hears of heartbeats stays at most H a second (60 a second without the stretch);
// no member is dropped as silent, and none thinks itself cut off, while every one beats at the
// longer interval (with silentMs not stretched with it, each instance's own heartbeat is older than
// silentMs when it beats again: it takes its cut-off share, 1/60); a killed one is still dropped,
// between its silence (3 intervals) and 2 intervals more after it was killed.

const N = 60
const H = 12
const HEARTBEAT = 1_000
const SILENT = 3_000

/** Counts the heartbeats instance `i` hears (its own echo included, as NATS delivers it). */
function heardBy(fleet: ActorFleet, i: number): { n: number } {
  const count = { n: 0 }
  const bus = fleet.instances[i]!.bus
  bus.subscribe(bus.subjects.members, () => count.n++)
  return count
}

/** The fewest live members any running instance counted, sampled every tick of the run. */
function fewestSeen(fleet: ActorFleet): { min: number; at: number; minShare: number; sample: (now: number) => void } {
  const seen = { min: Number.POSITIVE_INFINITY, at: 0, minShare: 1, sample: (_now: number): void => {} }
  seen.sample = (now) => {
    for (const x of fleet.instances) {
      if (!x.running) continue
      const live = x.fleet.members().length
      if (live < seen.min) [seen.min, seen.at] = [live, now]
      seen.minShare = Math.min(seen.minShare, x.fleet.share)
    }
  }
  return seen
}

t.test('a fleet past H: heartbeats stretch to N/H s, at most H a second in, and no member taken for silent', async (t) => {
  const fleet = new ActorFleet({ instances: N, limits: { full: 60, archive: 0 }, heartbeatMs: HEARTBEAT, silentMs: SILENT, maxHeartbeatsPerSecond: H })
  fleet.run(4_000)
  const every = heartbeatIntervalMs({ heartbeatMs: HEARTBEAT, instances: N, maxHeartbeatsPerSecond: H })
  t.equal(every, 5_000)
  t.same(new Set(fleet.instances.map((x) => x.fleet.heartbeatEveryMs)), new Set([every]), 'every instance beats every 5 s')
  const heard = heardBy(fleet, 0)
  const seen = fewestSeen(fleet)
  const SPAN = 30_000
  fleet.run(SPAN, seen.sample)
  const perSecond = (heard.n * 1_000) / SPAN
  t.comment(`instance 0 heard ${heard.n} heartbeats in ${SPAN / 1_000} s: ${perSecond.toFixed(1)} a second (${N} a second without the stretch)`)
  t.ok(perSecond <= H, `${perSecond.toFixed(1)} heartbeats a second in: at most H = ${H}`)
  t.ok(heard.n >= (N * SPAN) / every - N, `and every instance's heard every interval (${heard.n} of ${(N * SPAN) / every})`)
  t.equal(seen.min, N, `every instance counted all ${N} live throughout (fewest ${seen.min} at ${seen.at} ms)`)
  t.equal(seen.minShare, 1, `and applied the whole limit, not a cut-off share (least ${seen.minShare})`)
})

t.test('a killed instance is still dropped, within the stretched silence', async (t) => {
  const fleet = new ActorFleet({ instances: N, limits: { full: 60, archive: 0 }, heartbeatMs: HEARTBEAT, silentMs: SILENT, maxHeartbeatsPerSecond: H })
  fleet.run(4_000)
  const every = fleet.instances[0]!.fleet.heartbeatEveryMs
  const silence = silenceMs({ heartbeatMs: HEARTBEAT, silentMs: SILENT }, every)
  t.equal(silence, 15_000)
  const killedAt = fleet.now
  fleet.kill(N - 1)
  const victim = fleet.instances[N - 1]!.id
  let droppedAt = Number.NaN
  fleet.run(silence + 3 * every, (now) => {
    if (Number.isNaN(droppedAt) && !fleet.instances[0]!.fleet.members().some((m) => m.id === victim)) droppedAt = now
  })
  const after = droppedAt - killedAt
  t.comment(`dropped ${after} ms after it was killed (silence ${silence} ms, heartbeats every ${every} ms)`)
  // Silence is counted up to when the judge last heard its own heartbeat (an interval back), and
  // judged at the judge's heartbeats: from the victim's last heartbeat (up to an interval before it
  // was killed), silence + 1 to 2 intervals.
  t.ok(after >= silence, `not before its silence (${silence} ms)`)
  t.ok(after <= silence + 2 * every + fleet.tickMs, `within its silence and two intervals (${silence + 2 * every} ms)`)
  t.ok(
    fleet.instances.filter((x) => x.running).every((x) => x.fleet.members().length === N - 1),
    'every other instance dropped it, and only it',
  )
})

t.test('a fleet growing past H: the interval stretches with it, and nobody is dropped meanwhile', async (t) => {
  const fleet = new ActorFleet({ instances: 12, limits: { full: 60, archive: 0 }, heartbeatMs: HEARTBEAT, silentMs: SILENT, maxHeartbeatsPerSecond: H })
  fleet.run(3_000)
  t.equal(fleet.instances[0]!.fleet.heartbeatEveryMs, HEARTBEAT, '12 instances at H = 12: every heartbeatMs')
  // A drop shows as an instance counting fewer live members than it did a tick before (a newcomer
  // counts the others as their heartbeats reach it, within one interval of theirs).
  const last = new Map<string, number>()
  let drops = 0
  const watch = (): void => {
    for (const x of fleet.instances) {
      const live = x.fleet.members().length
      if (live < (last.get(x.id) ?? 0)) drops++
      last.set(x.id, live)
    }
  }
  // One more every 100 ms, to 60.
  let k = 0
  fleet.run(5_000, (now) => {
    if (now >= 3_000 + 100 * k && fleet.instances.length < N) {
      fleet.add()
      k++
    }
    watch()
  })
  let least = 1
  fleet.run(30_000, () => {
    watch()
    for (const x of fleet.instances) least = Math.min(least, x.fleet.share)
  })
  t.equal(fleet.instances.length, N)
  t.same(new Set(fleet.instances.map((x) => x.fleet.heartbeatEveryMs)), new Set([5_000]), 'every instance now beats every 5 s')
  t.equal(drops, 0, 'no instance ever counted fewer members than a moment before')
  t.same(new Set(fleet.instances.map((x) => x.fleet.members().length)), new Set([N]), `every instance counts all ${N}`)
  t.equal(least, 1, 'none took a cut-off share')
})
