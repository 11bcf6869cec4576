import { unpack } from 'msgpackr'
import type { FleetChannel } from '../../src/fleet/fleet-bus.js'

/**
 * The fleet's bus in memory, for Fleet instances of one test driven by hand: every message goes to
 * every instance, its sender's too (as NATS does). With `held`, messages wait until deliver(),
 * which makes the network's delay explicit; without, they arrive at once. The bus over a real
 * nats-server is tested in test/fleet/shared-limits.test.ts.
 * @example
 * const hub = new MemoryFleetHub({ held: true })
 * const fleet = new Fleet({ bus: hub.channel(), keys, self, clock, syncMs: 50, heartbeatMs: 1_000, silentMs: 3_000 })
 * fleet.heartbeat(); hub.deliver()
 */
export class MemoryFleetHub {
  readonly #held: boolean
  readonly #channels: MemoryFleetChannel[] = []
  #queue: { subject: string; data: Uint8Array }[] = []

  constructor(opts: { held?: boolean } = {}) {
    this.#held = opts.held === true
  }

  /** A new instance's channel on this hub. */
  channel(): MemoryFleetChannel {
    const channel = new MemoryFleetChannel(this)
    this.#channels.push(channel)
    return channel
  }

  /** Deliver everything published so far (with `held`) to every instance. */
  deliver(): void {
    const queued = this.#queue
    this.#queue = []
    for (const m of queued) this.#toAll(m.subject, m.data)
  }

  /** What a channel publishes (MemoryFleetChannel.publish). */
  sent(subject: string, data: Uint8Array): void {
    if (this.#held) this.#queue.push({ subject, data })
    else this.#toAll(subject, data)
  }

  #toAll(subject: string, data: Uint8Array): void {
    for (const c of this.#channels) c.receive(subject, data)
  }
}

/** One instance's channel on a MemoryFleetHub. */
export class MemoryFleetChannel implements FleetChannel {
  readonly subjects = { members: 'm', limits: 'l', hot: 'h', owners: 'o' }
  connected = true
  /** The link stalls without a reset: nothing goes out or comes in, and the client still thinks it is connected. */
  stalled = false
  readonly #handlers = new Map<string, ((d: Uint8Array) => void)[]>()
  /** What this instance took in of the limits (heartbeats left out): messages, and the entries they held, its own echoes left out. */
  readonly received = { messages: 0, entries: 0 }
  #self: string | undefined

  constructor(private readonly hub: MemoryFleetHub) {}

  publish(subject: string, data: Uint8Array): void {
    // Its own id, from its heartbeat: its echoes are not counted as received.
    if (subject === this.subjects.members) this.#self ??= (unpack(data) as { id: string }).id
    if (!this.stalled) this.hub.sent(subject, data)
  }

  subscribe(subject: string, on: (d: Uint8Array) => void): void {
    this.#handlers.set(subject, [...(this.#handlers.get(subject) ?? []), on])
  }

  receive(subject: string, data: Uint8Array): void {
    if (this.stalled) return
    const handlers = this.#handlers.get(subject)
    if (handlers === undefined) return
    if (subject !== this.subjects.members) {
      const m = unpack(data) as { from: string; entries?: unknown[]; hot?: unknown[] }
      if (m.from !== this.#self) {
        this.received.messages++
        this.received.entries += m.entries?.length ?? m.hot?.length ?? 0
      }
    }
    for (const h of handlers) h(data)
  }

  async close(): Promise<void> {}
}
