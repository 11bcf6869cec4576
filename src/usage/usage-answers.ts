import { randomBytes } from 'node:crypto'
import { pack, unpack } from 'msgpackr'
import type { FleetChannel } from '../fleet/fleet-bus.js'
import { subjectToken } from '../fleet/limit-entries.js'
import type { StateStore } from '../store/state-store.js'
import { UsageUnavailable } from './errors.js'
import { accountUsageView, usageHours, type AccountUsageView } from './usage-view.js'

/*
 * An instance with usage.project false keeps no usage rows: its dashboard asks, over the fleet's
 * channel, an instance that projects usage for the view of one account (docs/fleet.md, "Where
 * usage is projected"). Plain NATS request and answer, not JetStream: an answer is worth nothing
 * once the page that asked stopped waiting.
 */

/** An ask for an account's usage view, as `now` at the asker sees it; the answer goes to `replyTo`. */
export interface UsageAsk {
  id: string
  replyTo: string
  accountId: string
  hours: number
  now: number
}

/** The answer to the ask `id`. */
export interface UsageAnswer {
  id: string
  view: AccountUsageView
}

/**
 * The subjects under the fleet's root (fleetSubjectRoot): the asks, which every instance that
 * projects usage takes in one queue group, and the answers, one subject per asking instance.
 */
export function usageSubjects(subjectRoot: string): { ask: string; answers: string } {
  return { ask: `${subjectRoot}.usage.ask`, answers: `${subjectRoot}.usage.answer` }
}

/** The queue group of the answerers: one of them answers each ask, however many project usage. */
export const USAGE_ANSWERERS = 'usage-answerers'

/** How long an asker waits for an answer. */
export const USAGE_ASK_TIMEOUT_MS = 2_000
/** Most asks waiting for their answer at once: a flood of dashboard calls past it fails at once instead of growing memory. */
export const MAX_PENDING_USAGE_ASKS = 64

/**
 * Answer the fleet's usage asks from `store`, in the answerers' queue group (an instance with
 * usage.project true). An ask whose reply subject is not an asker's is dropped: an answer must
 * never land on another of the fleet's subjects.
 */
export function answerUsageAsks(bus: FleetChannel, subjectRoot: string, store: StateStore, onError: (err: unknown) => void): void {
  const subjects = usageSubjects(subjectRoot)
  bus.subscribe(
    subjects.ask,
    (data) => {
      try {
        const ask = unpack(data) as Partial<UsageAsk>
        if (typeof ask.id !== 'string' || typeof ask.accountId !== 'string' || typeof ask.now !== 'number' || !Number.isFinite(ask.now)) return
        if (typeof ask.replyTo !== 'string' || !ask.replyTo.startsWith(`${subjects.answers}.`)) return
        const view = accountUsageView(store, ask.accountId, usageHours(ask.hours), ask.now)
        bus.publish(ask.replyTo, pack({ id: ask.id, view } satisfies UsageAnswer))
      } catch (err) {
        onError(err)
      }
    },
    { queue: USAGE_ANSWERERS },
  )
}

export interface UsageAskerOptions {
  bus: FleetChannel
  subjectRoot: string
  /** This instance's id in the fleet: its answers come on `<answers>.<instance>`. */
  instance: string
  timeoutMs?: number
  maxPending?: number
}

/** The asks of an instance with usage.project false, each waiting for its answer at most timeoutMs. */
export class UsageAsker {
  readonly #bus: FleetChannel
  readonly #askSubject: string
  readonly #replyTo: string
  readonly #timeoutMs: number
  readonly #maxPending: number
  readonly #pending = new Map<string, { resolve: (view: AccountUsageView) => void; reject: (err: Error) => void; timer: NodeJS.Timeout }>()
  #closed = false

  constructor(opts: UsageAskerOptions) {
    const subjects = usageSubjects(opts.subjectRoot)
    this.#bus = opts.bus
    this.#askSubject = subjects.ask
    this.#replyTo = `${subjects.answers}.${subjectToken(opts.instance)}`
    this.#timeoutMs = opts.timeoutMs ?? USAGE_ASK_TIMEOUT_MS
    this.#maxPending = opts.maxPending ?? MAX_PENDING_USAGE_ASKS
    opts.bus.subscribe(this.#replyTo, (data) => this.#answered(data))
  }

  /** Asks waiting for their answer now. */
  get pending(): number {
    return this.#pending.size
  }

  /** The usage view of `accountId` as an instance that projects usage has it; UsageUnavailable when none answers in time. */
  ask(accountId: string, hours: number, now: number): Promise<AccountUsageView> {
    if (this.#closed) return Promise.reject(new UsageUnavailable('closing'))
    // Published while cut off, the ask would be dropped: say so now rather than after the wait.
    if (!this.#bus.connected) return Promise.reject(new UsageUnavailable('not connected'))
    if (this.#pending.size >= this.#maxPending) return Promise.reject(new UsageUnavailable('too many asks'))
    const id = randomBytes(8).toString('hex')
    return new Promise<AccountUsageView>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id)
        reject(new UsageUnavailable('no answer'))
      }, this.#timeoutMs)
      timer.unref()
      this.#pending.set(id, { resolve, reject, timer })
      this.#bus.publish(this.#askSubject, pack({ id, replyTo: this.#replyTo, accountId, hours, now } satisfies UsageAsk))
    })
  }

  /** Fail every ask still waiting (the gateway stops). */
  close(): void {
    this.#closed = true
    for (const [id, p] of this.#pending) {
      clearTimeout(p.timer)
      this.#pending.delete(id)
      p.reject(new UsageUnavailable('closing'))
    }
  }

  #answered(data: Uint8Array): void {
    let answer: Partial<UsageAnswer>
    try {
      answer = unpack(data) as Partial<UsageAnswer>
    } catch {
      return
    }
    // An answer to an ask that timed out already, or a second one: nobody waits for it.
    const p = typeof answer.id === 'string' ? this.#pending.get(answer.id) : undefined
    if (p === undefined || answer.view === undefined) return
    clearTimeout(p.timer)
    this.#pending.delete(answer.id!)
    p.resolve(answer.view)
  }
}
