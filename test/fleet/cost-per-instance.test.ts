import t, { type Test } from 'tap'
import { ActorFleet } from '../helpers/actor-fleet.js'

// What an instance reads of the others grows with what it serves, not with the fleet: ten
// instances, 1,000 accounts each calling 5 times a second (far under their 60 a second, so cold),
// each call sent to a random instance. Every instance counts the limits messages and entries it took
// in from the others (MemoryFleetChannel.received). Sharing every account with every instance, each
// took in about what the nine others served (9 tenths of the fleet's entries); reporting cold
// accounts to their two owners only, an instance takes in its owned share, 2 tenths. And the
// messages: with the reports held for fleet.coldReportMs (C) and sent in one message per owner, an
// instance takes in at most one message from each other instance per C, so that C = 250 ms takes
// in a fifth of the messages of C = syncMs = 50 ms (each other instance has news for it every time).
// The C = 50 ms run lifts fleet.maxReportsPerSecond (M) to 1,000: at the default 100, nine others
// would send 180 a second, so they report every (10 − 1)/100 s = 90 ms, two syncs, as the third
// run checks: at most M messages a second into each instance.

const N = 10
const ACCOUNTS = 1_000
const CALLS_PER_S = 5
const SECONDS = 4
const SYNC = 50

/** A repeatable random number in [0, 1) (mulberry32): the same spread on every run. */
function random(seed: number): () => number {
  let a = seed
  return () => {
    a = (a + 0x6d2b79f5) | 0
    let x = Math.imul(a ^ (a >>> 15), 1 | a)
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }
}

interface Taken {
  messages: number[]
  entries: number[]
}

function costAt(t: Test, coldReportMs: number, maxReportsPerSecond?: number): Taken {
  const fleet = new ActorFleet({ instances: N, limits: { full: 60, archive: 0 }, syncMs: SYNC, coldReportMs, maxReportsPerSecond })
  const rand = random(7)
  const served = new Array<number>(N).fill(0)
  const perTick = (ACCOUNTS * CALLS_PER_S * fleet.tickMs) / 1_000
  fleet.run(SECONDS * 1_000, () => {
    for (let k = 0; k < perTick; k++) {
      const i = Math.floor(rand() * N)
      fleet.call(i, `acc_${Math.floor(rand() * ACCOUNTS)}`)
      served[i]!++
    }
  })
  // What the instances sent of the limits, in entries (an account in one message): the fleet's calls as they are shared.
  const out = fleet.instances.map((x) => x.fleet.traffic?.().entriesOut ?? 0)
  const fleetEntries = out.reduce((a, b) => a + b, 0)
  const received = fleet.instances.map((x) => x.bus.received)
  const calls = served.reduce((a, b) => a + b, 0)
  t.comment(`C = ${coldReportMs} ms: calls ${calls} (${served.join(', ')} per instance), entries sent ${fleetEntries} (${out.join(', ')})`)
  t.comment(`taken in per instance: ${received.map((r) => `${r.entries} entries in ${r.messages} msgs`).join('; ')}`)
  const hot = fleet.instances.map((x) => x.fleet.hotAccounts?.() ?? 0)
  t.same(hot, new Array(N).fill(0), 'no account is hot')
  // One report from each other instance per C (the first reports come C in), and nothing else: no account is hot.
  const reports = (N - 1) * Math.floor((SECONDS * 1_000) / fleet.instances[0]!.fleet.coldReportMs)
  for (let i = 0; i < N; i++) {
    const r = received[i]!
    // Two owners an account: 2/N of the fleet's entries, with room for the hashing's unevenness.
    t.ok(
      r.entries <= (calls * 2 * 1.5) / N,
      `instance ${i} took in ${r.entries} entries: at most 1.5 × its two owners' share of ${calls} calls (${(calls * 2) / N})`,
    )
    t.ok(r.entries < 0.4 * calls, `instance ${i} took in ${r.entries} entries, under 0.4 of the ${calls} the fleet served (sharing all: about 0.9)`)
    t.ok(r.messages <= reports, `instance ${i} took in ${r.messages} messages: at most one from each other instance per C (${reports})`)
  }
  return { messages: received.map((r) => r.messages), entries: received.map((r) => r.entries) }
}

t.test(
  `${N} instances, ${ACCOUNTS} cold accounts spread thin: an instance takes in its owned share, not the fleet's calls, in one message per C from each other`,
  async (t) => {
    const everySync = costAt(t, SYNC, 1_000)
    const held = costAt(t, 250)
    const capped = costAt(t, SYNC)
    const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0)
    t.comment(
      `messages taken in by the ${N}: ${sum(everySync.messages)} at C = ${SYNC} ms, ${sum(held.messages)} at C = 250 ms; entries ${sum(everySync.entries)} and ${sum(held.entries)}`,
    )
    t.ok(
      sum(held.messages) <= 0.25 * sum(everySync.messages),
      `C = 250 ms: ${sum(held.messages)} messages taken in, at most a quarter of the ${sum(everySync.messages)} at C = ${SYNC} ms`,
    )
    t.ok(
      sum(held.entries) <= sum(everySync.entries),
      `C = 250 ms: ${sum(held.entries)} entries taken in, no more than at C = ${SYNC} ms (${sum(everySync.entries)}): an account reported once per C`,
    )
    const most = Math.max(...capped.messages) / SECONDS
    t.comment(`C = ${SYNC} ms at the default M: ${sum(capped.messages)} messages taken in, at most ${most} a second by one instance`)
    t.ok(most <= 100, `C = ${SYNC} ms at M = 100: at most ${most} messages a second into an instance`)
  },
)
