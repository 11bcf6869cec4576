import { fleetSubjects, type FleetChannel, type FleetSubjects } from './fleet-bus.js'

/** A fleet message between a worker and its supervisor (src/workers/supervisor.ts). */
export interface FleetIpcMessage {
  type: 'fleet'
  subject: string
  data: Uint8Array
}

export function isFleetIpcMessage(m: unknown): m is FleetIpcMessage {
  return typeof m === 'object' && m !== null && (m as { type?: unknown }).type === 'fleet'
}

/**
 * The fleet's channel for the workers of one machine run without NATS: each message goes to the
 * supervisor over the IPC channel of `tollgate start`'s fork, which hands it to every other worker.
 * Connected as long as the supervisor is (a worker whose supervisor died is stopped by it anyway).
 */
export class IpcFleetBus implements FleetChannel {
  readonly subjects: FleetSubjects
  readonly #handlers = new Map<string, ((data: Uint8Array) => void)[]>()
  readonly #onMessage = (m: unknown): void => {
    if (!isFleetIpcMessage(m)) return
    for (const handler of this.#handlers.get(m.subject) ?? []) handler(new Uint8Array(m.data))
  }

  constructor(subjectRoot: string) {
    if (process.send === undefined) throw new Error('IpcFleetBus needs an IPC channel: a worker is started by `tollgate start` with workers > 1')
    this.subjects = fleetSubjects(subjectRoot)
    process.on('message', this.#onMessage)
  }

  get connected(): boolean {
    return process.connected
  }

  /** To the other workers through the supervisor, and back to this one (as NATS echoes it). */
  publish(subject: string, data: Uint8Array): void {
    if (!process.connected) return
    // With a callback, a supervisor gone meanwhile is an error passed here, not an 'error' event
    // on process that would end this worker (it stops anyway on 'disconnect', start.ts).
    process.send!({ type: 'fleet', subject, data } satisfies FleetIpcMessage, undefined, {}, ignoreSendError)
    queueMicrotask(() => this.#onMessage({ type: 'fleet', subject, data }))
  }

  /** No queue groups here: each worker that subscribes gets the message (an ask is answered by each, the first answer taken). */
  subscribe(subject: string, onMessage: (data: Uint8Array) => void, _opts?: { queue?: string }): void {
    const list = this.#handlers.get(subject) ?? []
    list.push(onMessage)
    this.#handlers.set(subject, list)
  }

  async close(): Promise<void> {
    process.off('message', this.#onMessage)
  }
}

/** A message the supervisor did not take is lost as one over NATS would be: the next sync repeats it. */
function ignoreSendError(_err: Error | null): void {}
