import { pack, unpack } from 'msgpackr'
import type { Clock } from '../../actors/runtime/clock.js'
import { connectionAllowance, shareWhenCutOff } from '../../actors/fleet/shares.js'
import type { Consumption } from '../../actors/key/account-actor.js'
import type { FleetChannel } from './fleet-bus.js'
import { Membership, type Member } from './membership.js'

/** What the fleet needs of the key actors (src/gateway/key-directory.ts). */
export interface FleetKeys {
  takeConsumed(): { accountId: string; consumed: Consumption; open: number }[]
  openConnections(): { accountId: string; open: number }[]
  consumedElsewhere(accountId: string, consumed: Consumption): void
  setShare(share: number): void
}

export interface FleetOptions {
  bus: FleetChannel
  keys: FleetKeys
  self: Omit<Member, 'share'>
  clock: Clock
  /** How often what this instance admitted is sent to the others (the limits' lag). */
  syncMs: number
  /** How often it announces itself; silent for `silentMs`, an instance is dropped. */
  heartbeatMs: number
  silentMs: number
  onMembership?: (event: 'joined' | 'left', id: string, live: number) => void
  onShare?: (share: number) => void
}

/**
 * At most this many accounts in one limits message. NATS refuses a message over the server's
 * max_payload (1 MiB by default) and the bus drops what it cannot send: at about 29 bytes an entry
 * (65 at most, with a cooldown and a penalty), an instance that served some 36,000 accounts in one
 * interval stopped sharing any of them, silently. 4,096 entries are at most 266 KB, and one message
 * holds the receiving event loop for about 10 ms, not the 100 ms of 36,000 (bench/fleet-sim.ts).
 */
export const MAX_ENTRIES_PER_MESSAGE = 4_096

/**
 * One entry of a limits message: an account, what was admitted for it, its open connections. The
 * compute units and the time of the newest connection come last, so that an instance of an older version, which reads eight fields,
 * still reads the rest (and one of a newer version reads 0 units from it).
 */
type Entry = [
  accountId: string,
  full: number,
  archive: number,
  messages: number,
  connects: number,
  open: number,
  cooldownUntil: number,
  penaltyUntil: number,
  fullUnits?: number,
  archiveUnits?: number,
  /** When the newest of `connects` was made (the sender's clock; 0: none). */
  connectedAt?: number,
]
interface LimitsMessage {
  from: string
  entries: Entry[]
}

/**
 * This instance as one of a fleet: it announces itself, hears the others, and shares what it
 * admits for each key so that a key's limits hold across instances.
 *
 * Decisions stay local and in memory; the hot path never waits on the network. Every `syncMs`
 * each instance publishes, per account it served, the calls, messages and connections it
 * admitted and its open connections; each instance takes what the others admitted from its own
 * copy of the key's buckets (see actors/fleet/shares.ts). Over any window a key is served at most
 * its plan plus what the other instances admitted in the last `syncMs`. Gubernator's GLOBAL mode
 * sends hits to an owner that broadcasts the state; here every instance is its own owner of a
 * full copy, which needs no owner election or hand-over when the fleet changes, at the cost of
 * N messages per interval instead of 2 (a fleet is a handful of instances, not hundreds).
 *
 * Cut off from NATS, an instance applies 1/N of each limit (N: the fleet it last saw) until it is
 * back and has heard the others again; its buckets keep their level, so coming back is no burst.
 */
export class Fleet {
  readonly #opts: FleetOptions
  readonly #membership: Membership
  /** Open connections per account as each other instance last published them. */
  readonly #othersOpen = new Map<string, Map<string, number>>()
  /** This instance's open connections per account as it last published them. */
  readonly #publishedOpen = new Map<string, number>()
  /**
   * Per account, the connections this instance granted itself and when it last published its
   * count: its grant grows only once every live instance has been heard since that publication,
   * so that it never grows on a view in which the others have not yet told what they opened.
   */
  readonly #grants = new Map<string, { granted: number; since: number }>()
  #timers: NodeJS.Timeout[] = []
  #share = 1
  /** Until then, a rejoined instance keeps its cut-off share: it has not heard everyone yet. */
  #settlingUntil = 0
  /** When this instance last heard its own heartbeat back: NATS still carries its messages. */
  #selfHeardAt: number
  /** Whether it reaches the fleet (connected, and hears itself). */
  #reachable = true

  constructor(opts: FleetOptions) {
    this.#opts = opts
    this.#membership = new Membership({ ...opts.self, share: 1 }, opts.clock, opts.silentMs)
    this.#selfHeardAt = opts.clock.now()
  }

  start(): void {
    const { bus } = this.#opts
    bus.subscribe(bus.subjects.members, (data) => this.#heard(unpack(data) as Member))
    bus.subscribe(bus.subjects.limits, (data) => this.#received(unpack(data) as LimitsMessage))
    this.#timers = [setInterval(() => this.sync(), this.#opts.syncMs), setInterval(() => this.heartbeat(), this.#opts.heartbeatMs)]
    for (const t of this.#timers) t.unref()
    this.heartbeat()
  }

  stop(): void {
    for (const t of this.#timers) clearInterval(t)
    this.#timers = []
  }

  /** The live instances, this one included, sorted by id. */
  members(): Member[] {
    const self = this.#membership.self.id
    return this.#membership.live().map((m) => (m.id === self ? { ...m, share: this.#share } : m))
  }

  /** The part of each key's limit this instance applies now. */
  get share(): number {
    return this.#share
  }

  /** How many of the account's connections (the key's limit `max`) this instance may hold now. */
  allowance(accountId: string, max: number): number {
    if (this.#share < 1) return Math.max(1, Math.floor(max * this.#share))
    const open = this.#othersOpen.get(accountId)
    const self = this.#membership.self.id
    const peers = this.#membership.live().filter((m) => m.id !== self)
    // Every live instance has its part, those with no connection of this key too.
    const others = peers.map((m) => open?.get(m.id) ?? 0)
    const now = connectionAllowance({ max, published: this.#publishedOpen.get(accountId) ?? 0, others, rank: this.#membership.rank() })
    const at = this.#opts.clock.now()
    const grant = this.#grants.get(accountId)
    if (grant === undefined) {
      this.#grants.set(accountId, { granted: now, since: at })
      return now
    }
    // Less than granted: the others opened more meanwhile. More: only on a view that has heard
    // every instance since this grant was made or last told (else they may have opened unseen).
    if (now < grant.granted || peers.every((m) => this.#membership.lastHeard(m.id) > grant.since)) {
      if (now > grant.granted) grant.since = at
      grant.granted = now
    }
    return grant.granted
  }

  /** The bus went away (at once) or came back (it counts once this instance hears itself again). */
  connectionChanged(connected: boolean): void {
    if (!connected) this.#cutOff()
  }

  /**
   * Whether this instance reaches the fleet is told by its own heartbeat coming back, not only by
   * the client's connection state: a link that drops packets without a reset looks connected to
   * the client for minutes, while the others' heartbeats stop; an instance that then dropped them
   * as silent would take every key's whole limit. Not hearing itself, it takes its cut-off share
   * and keeps the fleet it last saw; hearing itself again, it waits a heartbeat and a half to hear
   * the others before taking the whole, shared limit back.
   */
  heartbeat(): void {
    const { bus, clock } = this.#opts
    const now = clock.now()
    const reachable = bus.connected && now - this.#selfHeardAt <= this.#opts.silentMs
    if (!reachable) this.#cutOff()
    else {
      if (!this.#reachable) {
        this.#reachable = true
        this.#settlingUntil = now + this.#opts.heartbeatMs * 1.5
        this.#membership.restartSilence()
      }
      if (this.#share < 1 && now >= this.#settlingUntil) this.#setShare(1)
      for (const id of this.#membership.prune(this.#selfHeardAt)) this.#left(id)
      if (this.#share === 1) this.#membership.noteSeen()
    }
    bus.publish(bus.subjects.members, pack({ ...this.#membership.self, share: this.#share }))
    // Every open count again, for instances that joined since it last changed.
    this.#publish(this.#opts.keys.openConnections().map(({ accountId, open }) => [accountId, 0, 0, 0, 0, open, 0, 0]))
  }

  /** Send what this instance admitted since the last call (its timer calls it every syncMs). */
  sync(): void {
    const consumed = this.#opts.keys.takeConsumed()
    if (consumed.length === 0) return
    this.#publish(
      consumed.map(({ accountId, consumed: c, open }) => [
        accountId,
        c.full,
        c.archive,
        c.messages,
        c.connects,
        open,
        c.cooldownUntil,
        c.penaltyUntil,
        c.fullUnits,
        c.archiveUnits,
        c.connectedAt ?? 0,
      ]),
    )
  }

  #publish(entries: Entry[]): void {
    if (entries.length === 0) return
    for (const [accountId, , , , , open] of entries) {
      const before = this.#publishedOpen.get(accountId) ?? 0
      if (open > 0) this.#publishedOpen.set(accountId, open)
      else this.#publishedOpen.delete(accountId)
      const grant = this.#grants.get(accountId)
      // A new count is news the others must hear before this instance's grant may grow again.
      if (open === 0) this.#grants.delete(accountId)
      else if (grant !== undefined && open !== before) grant.since = this.#opts.clock.now()
    }
    const { bus } = this.#opts
    for (let i = 0; i < entries.length; i += MAX_ENTRIES_PER_MESSAGE) {
      bus.publish(bus.subjects.limits, pack({ from: this.#membership.self.id, entries: entries.slice(i, i + MAX_ENTRIES_PER_MESSAGE) } satisfies LimitsMessage))
    }
  }

  #cutOff(): void {
    this.#reachable = false
    this.#settlingUntil = Number.POSITIVE_INFINITY
    this.#setShare(shareWhenCutOff(this.#membership.lastSeenCount))
  }

  #heard(member: Member): void {
    if (member.id === this.#membership.self.id) {
      this.#selfHeardAt = this.#opts.clock.now()
      return
    }
    if (this.#membership.heard(member)) this.#opts.onMembership?.('joined', member.id, this.#membership.live().length)
  }

  #received(message: LimitsMessage): void {
    const from = message.from
    if (from === this.#membership.self.id) return
    this.#membership.heardFrom(from)
    for (const [
      accountId,
      full,
      archive,
      messages,
      connects,
      open,
      cooldownUntil,
      penaltyUntil,
      fullUnits = 0,
      archiveUnits = 0,
      connectedAt,
    ] of message.entries) {
      if (full + archive + fullUnits + archiveUnits + messages + connects > 0 || cooldownUntil > 0 || penaltyUntil > 0) {
        this.#opts.keys.consumedElsewhere(accountId, {
          full,
          archive,
          fullUnits,
          archiveUnits,
          messages,
          connects,
          cooldownUntil,
          penaltyUntil,
          connectedAt: connectedAt || undefined,
        })
      }
      let byInstance = this.#othersOpen.get(accountId)
      if (open > 0) {
        if (byInstance === undefined) this.#othersOpen.set(accountId, (byInstance = new Map()))
        byInstance.set(from, open)
      } else if (byInstance !== undefined) {
        byInstance.delete(from)
        if (byInstance.size === 0) this.#othersOpen.delete(accountId)
      }
    }
  }

  #left(id: string): void {
    for (const [accountId, byInstance] of this.#othersOpen) {
      byInstance.delete(id)
      if (byInstance.size === 0) this.#othersOpen.delete(accountId)
    }
    this.#opts.onMembership?.('left', id, this.#membership.live().length)
  }

  #setShare(share: number): void {
    if (share === this.#share) return
    this.#share = share
    this.#opts.keys.setShare(share)
    this.#opts.onShare?.(share)
  }
}
