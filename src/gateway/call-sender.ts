import { METHODS } from '../rpc/method-table.js'
import type { Answer } from '../upstream/answer.js'
import type { VerifiedRegistry } from '../verified-reads/verified-registry.js'
import type { CallClass } from './call-class.js'
import type { CallBudget, GatewayCall } from './gateway-call.js'

/** The time-outs and hedging of calls sent to a node (UpstreamCallerOptions). */
export interface CallSenderOptions {
  /** Time-out of one attempt of an ordinary call (limits.upstreamTimeoutMs). */
  timeoutMs: number
  /** Time-out of a heavy call (method table `heavy`), which is also its whole budget. */
  heavyTimeoutMs: number
  /** Per-method time-outs, overriding the two above. */
  methodTimeoutMs: Readonly<Record<string, number>>
  hedge: { enabled: boolean; minDelayMs: number; maxDelayMs: number }
}

/**
 * A call's time budget by its method (budgetOf, read where the call is routed), and the last step
 * of a call that goes to a node: the pool (which fails over between the nodes of the kind) or, for
 * a verified read, the network's proven reads.
 * @example
 * const answer = await sender.send(call, 'table')
 */
export class CallSender {
  /** The budget of most calls (an ordinary read), made once per setting rather than per call. */
  #read: CallBudget

  constructor(
    private opts: CallSenderOptions,
    private readonly verified: VerifiedRegistry,
  ) {
    this.#read = readBudget(opts)
  }

  /** A reload's time-out of ordinary calls and hedging, for the calls that start from now on. */
  retune(timeoutMs: number, hedge: CallSenderOptions['hedge']): void {
    this.opts = { ...this.opts, timeoutMs, hedge }
    this.#read = readBudget(this.opts)
  }

  /**
   * A method's time budget: its own time-out (limits.methodTimeoutMs), else the heavy one for heavy
   * methods and those not in the table (forwarded: heavy too), whose time-out is also their whole
   * budget: a heavy call that timed out on one node would most likely time out on the next (a fast
   * failure, a refused connection, still fails over). Only reads are hedged or probe a node: a
   * filter made twice is not the same call.
   */
  budgetOf(method: string): CallBudget {
    const spec = METHODS[method]
    const own = this.opts.methodTimeoutMs[method]
    if (spec === undefined || spec.heavy === true) {
      const timeoutMs = own ?? this.opts.heavyTimeoutMs
      return { timeoutMs, deadlineMs: timeoutMs, heavy: true, read: false, hedge: undefined }
    }
    const read = spec.filter === undefined && spec.path === undefined
    if (read && own === undefined) return this.#read
    return {
      timeoutMs: own ?? this.opts.timeoutMs,
      deadlineMs: undefined,
      heavy: false,
      read,
      hedge: read && this.opts.hedge.enabled ? this.opts.hedge : undefined,
    }
  }

  /** A method with a time-out of its own (limits.methodTimeoutMs). */
  hasOwnTimeout(method: string): boolean {
    return this.opts.methodTimeoutMs[method] !== undefined
  }

  /** A call of class `pinned`, `verified` or `table` to a node; a verified one (heavy ones too: eth_getBlockReceipts) checked as it comes back. */
  send(c: GatewayCall, cls: CallClass): Promise<Answer> {
    if (cls === 'verified') return this.verified.of(c.pool).call(c)
    return c.pool.call(c)
  }

  /**
   * A call of class `unlisted`: as it is, and heavy: one of its key's heavy calls at once and the
   * heavy time-out, or 40 unlisted traces of one key would all be at the node at once, past the
   * bound listed traces keep.
   */
  sendUnlisted(c: GatewayCall): Promise<Answer> {
    return c.heavySlot === undefined ? c.pool.call(c) : c.heavySlot.run(() => c.pool.call(c))
  }
}

/** An ordinary read's budget under these options. */
function readBudget(opts: CallSenderOptions): CallBudget {
  return { timeoutMs: opts.timeoutMs, deadlineMs: undefined, heavy: false, read: true, hedge: opts.hedge.enabled ? opts.hedge : undefined }
}
