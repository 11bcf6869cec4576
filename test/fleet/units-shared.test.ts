import t from 'tap'
import { pack } from 'msgpackr'
import { FakeClock } from '../helpers/fake-clock.js'
import type { Consumption } from '../../actors/account/account-actor.js'
import { Fleet, type FleetKeys } from '../../src/fleet/fleet.js'
import { MemoryFleetHub } from '../helpers/memory-fleet-bus.js'

// Compute units admitted on one instance of a hot account are taken from the key's budget on the
// others, and a limits message of an instance of the previous version (eight fields an entry, no
// units) is still read. The channel delivers at once to every instance; the processes and NATS are in
// shared-limits.test.ts.

/** What an instance's key actors admitted, and what it was told the others admitted. */
class Keys implements FleetKeys {
  pending: Consumption | undefined
  readonly elsewhere: Array<{ accountId: string; consumed: Consumption }> = []
  takeConsumed() {
    const c = this.pending
    this.pending = undefined
    return c === undefined ? [] : [{ accountId: 'acc_1', consumed: c, open: 0 }]
  }
  openConnections() {
    return []
  }
  consumedElsewhere(accountId: string, consumed: Consumption): void {
    this.elsewhere.push({ accountId, consumed })
  }
  setShare(): void {}
}

const none: Consumption = { full: 0, archive: 0, fullUnits: 0, archiveUnits: 0, messages: 0, connects: 0, cooldownUntil: 0, penaltyUntil: 0 }

t.test('units admitted on one instance reach the other; an entry without units reads as none', async (t) => {
  const hub = new MemoryFleetHub()
  const clock = new FakeClock(1_000_000)
  const [a, b] = [0, 1].map((i) => {
    const bus = hub.channel()
    const keys = new Keys()
    const fleet = new Fleet({
      bus,
      keys,
      self: { id: `i${i}`, address: `a${i}`, startedAt: 0, version: 't' },
      clock,
      syncMs: 50,
      heartbeatMs: 1_000,
      silentMs: 3_000,
    })
    fleet.start()
    return { fleet, keys, bus }
  })
  t.teardown(() => {
    a!.fleet.stop()
    b!.fleet.stop()
  })
  // Shared with every instance once its owner marked it hot (a cold account's calls go to its owners only).
  a!.bus.publish('h', pack({ from: 'i1', hot: [['acc_1', 60_000]] }))
  a!.keys.pending = { ...none, full: 3, fullUnits: 927, archive: 1, archiveUnits: 500 }
  a!.fleet.sync()
  t.same(b!.keys.elsewhere, [{ accountId: 'acc_1', consumed: { ...none, full: 3, fullUnits: 927, archive: 1, archiveUnits: 500, refused: 0 } }])
  t.same(a!.keys.elsewhere, [], 'not its own')

  // Units alone (a WebSocket message's, its calls charged as messages) are news too.
  a!.keys.pending = { ...none, fullUnits: 309 }
  a!.fleet.sync()
  t.same(b!.keys.elsewhere.at(-1), { accountId: 'acc_1', consumed: { ...none, fullUnits: 309, refused: 0 } })

  // As the previous version packs it: eight fields, no units.
  a!.bus.publish('l', pack({ from: 'old', entries: [['acc_1', 2, 0, 0, 0, 0, 0, 0]] }))
  t.same(b!.keys.elsewhere.at(-1), { accountId: 'acc_1', consumed: { ...none, full: 2, refused: 0 } })
})
