import type { MethodSpec } from '../rpc/method-table.js'
import type { Answer } from '../upstream/answer.js'
import type { PoolCallOptions } from '../upstream/pool.js'
import type { VerifiedRegistry } from '../verified/verified-registry.js'
import type { CallClass } from './call-class.js'
import type { UpstreamCall } from './upstream-call.js'

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
 * The last step of a call that goes to a node: its time-out and options by its class, then the
 * pool (which fails over between the nodes of the kind) or, for a verified read, the network's
 * proven reads.
 * @example
 * const answer = await sender.send(call, 'table', METHODS[call.method])
 */
export class CallSender {
  constructor(
    private opts: CallSenderOptions,
    private readonly verified: VerifiedRegistry,
  ) {}

  /** A reload's time-out of ordinary calls and hedging, for the calls that start from now on. */
  retune(timeoutMs: number, hedge: CallSenderOptions['hedge']): void {
    this.opts = { ...this.opts, timeoutMs, hedge }
  }

  /** A method's own time-out, else the heavy one for heavy methods and those not in the table (forwarded: heavy too). */
  timeoutOf(method: string, spec: MethodSpec | undefined): number {
    const own = this.opts.methodTimeoutMs[method]
    if (own !== undefined) return own
    return spec === undefined || spec.heavy === true ? this.opts.heavyTimeoutMs : this.opts.timeoutMs
  }

  /** A method with a time-out of its own (limits.methodTimeoutMs). */
  hasOwnTimeout(method: string): boolean {
    return this.opts.methodTimeoutMs[method] !== undefined
  }

  /**
   * A call of class `pinned`, `verified` or `table` to a node.
   * @param spec the call's entry in the method table
   */
  send(c: UpstreamCall, cls: CallClass, spec: MethodSpec): Promise<Answer> {
    const timeoutMs = this.timeoutOf(c.method, spec)
    const opts: PoolCallOptions = { timeoutMs, node: c.node, minBlock: c.minBlock, account: c.account }
    // A heavy call that timed out on one node would most likely time out on the next: its
    // time-out is its whole budget (a fast failure, a refused connection, still fails over).
    if (spec.heavy === true) {
      opts.deadlineMs = timeoutMs
      // Looked up once here: the pool scores, and the node times, heavy calls apart.
      opts.heavy = true
    }
    // Only reads are hedged or probe a node: a filter made twice, a call pinned to its node, are not the same call.
    else if (cls !== 'pinned') {
      opts.read = true
      if (this.opts.hedge.enabled) opts.hedge = this.opts.hedge
    }
    // Heavy ones too (eth_getBlockReceipts): checked as they come back.
    if (cls === 'verified') return this.verified.of(c.pool).call(c.kind, c.method, c.params, c.idJson, opts)
    return c.pool.call(c.kind, c.method, c.params, c.idJson, opts)
  }

  /**
   * A call of class `unlisted`: as it is, and heavy: one of its key's heavy calls at once and the
   * heavy time-out, or 40 unlisted traces of one key would all be at the node at once, past the
   * bound listed traces keep.
   */
  sendUnlisted(c: UpstreamCall): Promise<Answer> {
    const timeoutMs = this.timeoutOf(c.method, undefined)
    const send = () => c.pool.call(c.kind, c.method, c.params, c.idJson, { timeoutMs, deadlineMs: timeoutMs, account: c.account, heavy: true })
    return c.heavy === undefined ? send() : c.heavy.run(send)
  }
}
