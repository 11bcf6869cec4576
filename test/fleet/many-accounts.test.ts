import t from 'tap'
import { systemClock } from '../../actors/runtime/clock.js'
import type { Consumption } from '../../actors/account/account-actor.js'
import { FleetBus } from '../../src/fleet/fleet-bus.js'
import { Fleet, MAX_ENTRIES_PER_MESSAGE, type FleetKeys } from '../../src/fleet/fleet.js'
import { startNats } from '../../harness/nats-server.js'
import { until } from '../helpers/eventually.js'

// An instance that served more accounts in one interval than fit in one NATS message (the
// server's max_payload, 1 MiB by default: some 36,000 accounts) must still share every one of them.
// Sent as one message, NATS refused it and the bus dropped it: none was shared, silently. Cold, they
// go to their owners: in a fleet of two each account's two owners are both instances, so the other
// instance hears every one of them as their owner.

const ACCOUNTS = 50_000

/** Keys that consumed one call of each of `ids` once, and record what the others consumed. */
class Keys implements FleetKeys {
  readonly heard = new Set<string>()
  #pending: string[]
  constructor(ids: string[]) {
    this.#pending = ids
  }
  takeConsumed(): { accountId: string; consumed: Consumption; open: number }[] {
    const ids = this.#pending
    this.#pending = []
    return ids.map((accountId) => ({
      accountId,
      consumed: { full: 1, archive: 0, messages: 0, connects: 0, cooldownUntil: 0, penaltyUntil: 0, fullUnits: 0, archiveUnits: 0 },
      open: 0,
    }))
  }
  openConnections(): { accountId: string; open: number }[] {
    return []
  }
  consumedElsewhere(accountId: string): void {
    this.heard.add(accountId)
  }
  setShare(): void {}
}

t.test(`${ACCOUNTS.toLocaleString('en-US')} accounts served in one interval all reach the other instance`, async (t) => {
  t.setTimeout(300_000)
  const nats = await startNats()
  t.teardown(() => nats.stop())
  const ids = Array.from({ length: ACCOUNTS }, (_, i) => `acc_${i.toString(16).padStart(16, '0')}`)
  const root = 'tollgate_fleet.MANY'
  const make = (id: string, keys: Keys): { fleet: Fleet; bus: FleetBus } => {
    let fleet: Fleet | undefined
    const bus = FleetBus.open(nats.url, root, (up) => fleet?.connectionChanged(up))
    t.teardown(() => bus.close())
    // A sync interval longer than the test: it syncs when the test says.
    fleet = new Fleet({
      bus,
      keys,
      self: { id, address: id, startedAt: 0, version: 'test' },
      clock: systemClock,
      syncMs: 3_600_000,
      heartbeatMs: 200,
      silentMs: 60_000,
    })
    t.teardown(() => fleet.stop())
    return { fleet, bus }
  }
  const sender = new Keys(ids)
  const receiver = new Keys([])
  const a = make('a', sender)
  const b = make('b', receiver)
  t.ok(await until(() => a.bus.connected && b.bus.connected, 60_000), 'both connected')
  a.fleet.start()
  b.fleet.start()
  // Each hears the other's heartbeat: both subscriptions are in place on the server.
  t.ok(await until(() => a.fleet.members().length === 2 && b.fleet.members().length === 2, 60_000), 'each hears the other')

  a.fleet.sync()
  t.ok(
    await until(() => b.fleet.ownedAccounts === ACCOUNTS, 60_000),
    `the other instance heard ${b.fleet.ownedAccounts} of ${ACCOUNTS} accounts as their owner`,
  )
  t.ok(
    ids.every((id) => b.fleet.ownersOf(id).includes('b')),
    'every one of them is its own',
  )
  t.ok(ACCOUNTS > 2 * MAX_ENTRIES_PER_MESSAGE, 'in several messages')
  t.ok(b.fleet.traffic().messagesIn >= Math.ceil(ACCOUNTS / MAX_ENTRIES_PER_MESSAGE), `${b.fleet.traffic().messagesIn} messages taken in`)
})
