import t from 'tap'
import { FakeClock } from '../helpers/fake-clock.js'
import type { Consumption } from '../../actors/account/account-actor.js'
import { Fleet, type FleetKeys } from '../../src/fleet/fleet.js'
import { MemoryFleetHub } from '../helpers/memory-fleet-bus.js'

// The connection grants of three instances, driven by hand: what each may open when, with a fake
// clock and a channel that delivers only when the test says (as NATS would, late). The processes
// and NATS themselves are in shared-limits.test.ts; this is the arithmetic of who may open what.

const MAX = 50
const ACCOUNT = 'acc_1'

/** The key actors of one instance, reduced to an open count per account. */
class OpenCounts implements FleetKeys {
  open = 0
  #changed = false
  connect(): void {
    this.open++
    this.#changed = true
  }
  takeConsumed(): { accountId: string; consumed: Consumption; open: number }[] {
    if (!this.#changed) return []
    this.#changed = false
    return [
      {
        accountId: ACCOUNT,
        consumed: { full: 0, archive: 0, fullUnits: 0, archiveUnits: 0, messages: 0, connects: 1, cooldownUntil: 0, penaltyUntil: 0 },
        open: this.open,
      },
    ]
  }
  openConnections(): { accountId: string; open: number }[] {
    return this.open > 0 ? [{ accountId: ACCOUNT, open: this.open }] : []
  }
  consumedElsewhere(): void {}
  setShare(): void {}
}

function fleetOf(n: number) {
  const clock = new FakeClock(1_000_000)
  // Messages wait until the test delivers them (as NATS would, late).
  const hub = new MemoryFleetHub({ held: true })
  const instances = Array.from({ length: n }, (_, i) => {
    const bus = hub.channel()
    const keys = new OpenCounts()
    const shares: number[] = []
    const fleet = new Fleet({
      bus,
      keys,
      self: { id: `i${i}`, address: `a${i}`, startedAt: 0, version: 't' },
      clock,
      syncMs: 50,
      heartbeatMs: 1_000,
      silentMs: 3_000,
      onShare: (share) => shares.push(share),
    })
    return { fleet, keys, bus, shares }
  })
  // The test drives time, not the timers.
  for (const { fleet } of instances) fleet.start({ timers: false })
  hub.deliver() // everyone's first heartbeat: a fleet of n
  /** Each instance opens connections while its grant allows, up to `want` attempts. */
  const open = (i: number, want: number): number => {
    const x = instances[i]!
    let opened = 0
    for (let k = 0; k < want && x.keys.open < x.fleet.allowance(ACCOUNT, MAX); k++, opened++) x.keys.connect()
    return opened
  }
  /** Every instance sends what it opened; it arrives 10 ms later. */
  const sync = () => {
    for (const x of instances) x.fleet.sync()
    clock.advance(10)
  }
  /** A second passes: the instances given beat, and what they published arrives. */
  const second = (beating: number[]) => {
    clock.advance(1_000)
    for (const i of beating) instances[i]!.fleet.heartbeat()
    hub.deliver()
  }
  return { clock, hub, instances, open, sync, second }
}

t.test('three instances that each see nothing of the others open 17, 17 and 16', async (t) => {
  const f = fleetOf(3)
  t.same(
    [0, 1, 2].map((i) => f.open(i, 30)),
    [17, 17, 16],
  )
})

t.test('late news never lets an instance grow past what the others may have opened', async (t) => {
  const f = fleetOf(3)
  // Each opens its part; they all tell, and before the news arrives, each tries for more.
  for (const i of [0, 1, 2]) f.open(i, 30)
  f.sync()
  for (const i of [0, 1, 2]) f.open(i, 30)
  t.same(
    f.instances.map((x) => x.keys.open),
    [17, 17, 16],
    'nobody grows on a view that has not heard the others',
  )
  for (let round = 0; round < 5; round++) {
    f.hub.deliver()
    for (const i of [0, 1, 2]) f.open(i, 30)
    f.sync()
  }
  const total = f.instances.reduce((sum, x) => sum + x.keys.open, 0)
  t.equal(total, MAX, `${f.instances.map((x) => x.keys.open).join(' + ')} = ${total}: the limit, and no more`)
})

t.test('a key whose clients all reach one instance gets the whole limit as the others are heard', async (t) => {
  const f = fleetOf(3)
  let opened = f.open(0, 50)
  t.equal(opened, 17, 'a third at once')
  for (let round = 0; round < 30 && f.instances[0]!.keys.open < MAX; round++) {
    f.sync()
    f.hub.deliver()
    f.clock.advance(1_000)
    for (const x of f.instances) x.fleet.heartbeat()
    f.clock.advance(10)
    f.hub.deliver()
    opened += f.open(0, 50)
  }
  t.equal(f.instances[0]!.keys.open, MAX, 'all 50, after rounds of heartbeats')
})

t.test('an instance cut off again just after rejoining still takes a third: the others it heard late still count', async (t) => {
  const f = fleetOf(3)
  const cut = f.instances[2]!
  const second = f.second
  second([0, 1, 2])
  cut.bus.stalled = true
  for (let s = 0; s < 5; s++) second([0, 1, 2])
  t.same(cut.shares, [1 / 3], 'cut off: a third of each limit')
  // Back: it hears itself at once, but the others' next heartbeats are late (a loaded machine).
  cut.bus.stalled = false
  for (let s = 0; s < 4; s++) second([2])
  t.same(cut.shares, [1 / 3, 1], 'back: the whole, shared limit after settling')
  // Cut again before the others were heard: the fleet it last saw is still three.
  cut.bus.stalled = true
  for (let s = 0; s < 5; s++) second([0, 1, 2])
  t.same(cut.shares, [1 / 3, 1, 1 / 3], 'cut off again: a third, not the whole limit of a fleet of one')
})

t.test('a link that stalls between the heartbeats of the others and its own: the instance takes a third, not the whole', async (t) => {
  const f = fleetOf(3)
  const cut = f.instances[2]!
  // The others beat 0.9 s before it: when its link stalls, they fall silent 0.9 s before it does.
  const second = () => {
    f.clock.advance(100)
    f.instances[0]!.fleet.heartbeat()
    f.instances[1]!.fleet.heartbeat()
    f.hub.deliver()
    f.clock.advance(900)
    cut.fleet.heartbeat()
    f.hub.deliver()
  }
  for (let s = 0; s < 3; s++) second()
  cut.bus.stalled = true
  for (let s = 0; s < 6; s++) second()
  t.same(cut.shares, [1 / 3], 'cut off: a third of each limit, the fleet it last heard')
  t.equal(cut.fleet.members().length, 3, 'the others are kept while it cannot hear them')
})

t.test('a rejoined instance grows no grant on the others before it has heard them again', async (t) => {
  const f = fleetOf(3)
  const cut = f.instances[2]!
  const second = f.second
  second([0, 1, 2])
  f.clock.advance(10)
  t.equal(f.open(2, 50), 16, 'its part (16, 17 and 17 for the three), granted after it last heard the others')
  cut.bus.stalled = true
  for (let s = 0; s < 5; s++) second([0, 1, 2])
  // Back, hearing itself; the others' heartbeats are late: what they opened meanwhile is unknown.
  cut.bus.stalled = false
  for (let s = 0; s < 4; s++) second([2])
  t.same(cut.shares, [1 / 3, 1], 'back in the fleet')
  t.equal(f.open(2, 50), 0, 'no more than its grant: the others have not been heard since it was made')
  second([0, 1, 2])
  second([0, 1, 2])
  t.ok(f.open(2, 50) > 0, 'more once the others are heard again')
})
