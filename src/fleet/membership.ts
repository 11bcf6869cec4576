import type { Clock } from '../../actors/runtime/clock.js'
import { silenceMs } from '../../actors/fleet/heartbeat-interval.js'

/** What an instance announces about itself. */
export interface Member {
  id: string
  /** The address its clients use (its publicUrl, or listen host:port). */
  address: string
  startedAt: number
  version: string
  /** The part of each key's limit it applies: 1 while it sees the fleet, 1/N when cut off. */
  share: number
  /**
   * It owns accounts (hears reports of cold accounts on its own subject). An instance of an older
   * version does not say so and is never chosen as an owner: reports sent to it would be lost.
   */
  owns?: boolean
  /** The accounts it owns (heard of in the last second) and those hot as it knows them, at its heartbeat (`tollgate fleet`). */
  owned?: number
  hot?: number
  /** Its last heartbeat: it is stopping, and the others drop it now rather than after silentMs. */
  leaving?: boolean
  /**
   * How often it announces itself now (ms): heartbeatMs, stretched in a large fleet
   * (actors/fleet/heartbeat-interval.ts). The others wait silentMs stretched as much before they
   * drop it; an instance of an older version does not say, and beats every heartbeatMs.
   */
  every?: number
}

/** What the silence is judged by: fleet.heartbeatMs and fleet.silentMs. */
export interface SilenceSettings {
  heartbeatMs: number
  silentMs: number
}

/**
 * The live instances of the fleet, from their heartbeats: an instance silent for `silentMs` is
 * dropped (its connections and consumption stop counting); `silentMs` stretched as its heartbeat
 * is, when it says it beats less often than every `heartbeatMs` (Member.every), or as this
 * instance's own is (`stretch`): a slower heartbeat is never taken for silence. While this instance is cut off from
 * NATS it hears nobody; the count it last saw is kept, for the share it applies meanwhile.
 */
export class Membership {
  readonly #self: Member
  readonly #clock: Clock
  readonly #silence: SilenceSettings
  readonly #peers = new Map<string, { member: Member; heardAt: number }>()
  #lastSeenCount = 1
  /** Silence counts from here at the earliest: when this instance last rejoined (restartSilence). */
  #silenceFrom = 0

  constructor(self: Member, clock: Clock, silence: SilenceSettings) {
    this.#self = self
    this.#clock = clock
    this.#silence = silence
  }

  get self(): Member {
    return this.#self
  }

  /** A heartbeat arrived (own heartbeats are ignored). Returns whether it was a new instance. */
  heard(member: Member): boolean {
    if (member.id === this.#self.id) return false
    const known = this.#peers.has(member.id)
    this.#peers.set(member.id, { member, heardAt: this.#clock.now() })
    return !known
  }

  /** Any other message from a live instance (its limits): it is alive, heard now. */
  heardFrom(id: string): void {
    const peer = this.#peers.get(id)
    if (peer !== undefined) peer.heardAt = this.#clock.now()
  }

  /** When a live instance was last heard from (0: not live). */
  lastHeard(id: string): number {
    return this.#peers.get(id)?.heardAt ?? 0
  }

  /**
   * This instance hears the fleet again after being cut off: what it did not hear meanwhile was its
   * own deafness, not the others' silence, so their silence counts from now. Pruned at once, they
   * would leave it a fleet of one until their next heartbeats came, and a cut in that moment would
   * take every key's whole limit (the share of a fleet of one). When each was last heard stays
   * true: the connection grants ask whether the others were heard since a grant was made.
   */
  restartSilence(): void {
    this.#silenceFrom = this.#clock.now()
  }

  /**
   * Drop the silent; returns the ids dropped. Silence is counted up to `heardUntil`, the last moment
   * this instance is known to have heard the fleet (its own heartbeat came back), not up to now: when
   * its link stalls, the others fall silent a little before it misses its own heartbeat, and dropping
   * them in that moment would leave it a fleet of one, whose share, once it notices the cut, is
   * every key's whole limit. A peer is silent after `silentMs` stretched by the longer of its own
   * heartbeat's interval (Member.every) and `everyMs`, this instance's.
   */
  prune(heardUntil: number, everyMs = this.#silence.heartbeatMs): string[] {
    const dropped: string[] = []
    for (const [id, peer] of this.#peers) {
      // The longer of its own heartbeat's and this instance's: views of N differ for a moment around a join.
      const silent = silenceMs(this.#silence, Math.max(everyMs, peer.member.every ?? this.#silence.heartbeatMs))
      if (heardUntil - Math.max(peer.heardAt, this.#silenceFrom) > silent) {
        this.#peers.delete(id)
        dropped.push(id)
      }
    }
    return dropped
  }

  /** An instance said it is leaving: dropped now. Returns whether it was live. */
  forget(id: string): boolean {
    return this.#peers.delete(id)
  }

  isLive(id: string): boolean {
    return this.#peers.has(id)
  }

  /** Every live instance, this one included, sorted by id. */
  live(): Member[] {
    return [this.#self, ...[...this.#peers.values()].map((p) => p.member)].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  }

  /** This instance's place among the live ones (sorted by id). */
  rank(): number {
    return this.live().findIndex((m) => m.id === this.#self.id)
  }

  /** Remember the size of the fleet (called while connected), for when this instance is cut off. */
  noteSeen(): void {
    this.#lastSeenCount = this.#peers.size + 1
  }

  get lastSeenCount(): number {
    return this.#lastSeenCount
  }
}
