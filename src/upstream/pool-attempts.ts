import type { NodeKind } from '../core/node-kind.js'
import type { Answer } from './answer.js'
import { askAgain } from './ask-again.js'
import type { UpstreamTransportError } from './errors.js'
import type { FailoverSteps } from './failover.js'
import type { Hedging } from './hedged-call.js'
import type { MethodLearning } from './method-learning.js'
import { saysMethodMissing } from './method-missing.js'
import type { UpstreamNode } from './node.js'
import type { Choice } from './node-choice.js'
import { notSafeToRepeat, type AskedAgainCounters, type PoolCall, type PoolCallOptions } from './pool-call.js'

/** What a call's attempts need of their pool: made once per pool, so that a call costs one object, not a closure per step. */
export interface PoolParts {
  readonly learning: MethodLearning
  readonly hedging: Hedging
  readonly askedAgain: AskedAgainCounters
  /** The node for the next attempt (NodeChooser), undefined when none is left to try. */
  choose(kind: NodeKind, tried: ReadonlySet<UpstreamNode>, method: string | undefined, opts: PoolCallOptions): Choice | undefined
  /** The node a pinned call names, unless tried. */
  named(name: string, tried: ReadonlySet<UpstreamNode>): Choice | undefined
  byName(name: string): UpstreamNode | undefined
  nodes(): readonly UpstreamNode[]
  /** NoHealthyUpstream for the kind, with why each node takes no call. */
  noneLeft(kind: NodeKind): Error
}

/**
 * One call's attempts on its pool, as withFailover runs them: each attempt on the node chosen,
 * hedged when the call is a read (Hedging wraps the attempt), and its answer judged: a node's
 * "method not found" while another may serve the method, an eth_blockNumber below the network's
 * head or an empty answer from a node behind it (askAgain) are asked again of another node, the
 * answer kept meanwhile; the client gets the kept answer when no node does better.
 * @example
 * const answer = await withFailover(clock, call, tried, new PoolAttempts(parts, call, tried))
 */
export class PoolAttempts implements FailoverSteps<Choice, Answer, Answer> {
  /** An answer judged not good enough, kept in case no other node does better: a node's answer as it was. */
  #kept: Answer | undefined
  /** Nodes that said they lack the method in this call (made at the first): set aside once another serves it. */
  #lacking: UpstreamNode[] | undefined
  /** Nodes passed over from the start are not attempts (avoid may name nodes of another pool). */
  readonly #avoided: number

  constructor(
    private readonly parts: PoolParts,
    /** The call as it came to the pool: each attempt hands it to its node as it is. */
    private readonly call: PoolCall,
    private readonly tried: Set<UpstreamNode>,
  ) {
    this.#avoided = tried.size
  }

  choose(tried: ReadonlySet<UpstreamNode>): Choice | undefined {
    const { call } = this
    return call.node === undefined ? this.parts.choose(call.kind, tried, call.method, call) : this.parts.named(call.node, tried)
  }

  nodeOf(choice: Choice): UpstreamNode {
    return choice.node
  }

  /** Hedging is a policy around one attempt: after a delay, one more node, the first answer wins. */
  attempt(choice: Choice, timeoutMs: number): Promise<Answer> {
    const { parts, call, tried } = this
    const hedgeMs = parts.hedging.delayFor(choice, call)
    if (hedgeMs === undefined) return choice.node.call(call, timeoutMs)
    const another = () => parts.choose(call.kind, tried, call.method, { ...call, read: false })?.node
    return parts.hedging.run(choice, call, timeoutMs, hedgeMs, tried, another)
  }

  settle(reply: Answer): Answer | undefined {
    const { parts } = this
    const { method } = this.call
    if (this.call.node === undefined) {
      // Error answers only: an ordinary answer is never read for this.
      if (reply.isError && saysMethodMissing(method, reply)) {
        const by = parts.byName(reply.node)
        if (by !== undefined) (this.#lacking ??= []).push(by)
        parts.askedAgain.methodMissing++
        this.#kept ??= reply
        return undefined
      }
      if (this.#lacking !== undefined) parts.learning.served(method, this.#lacking)
      const node = parts.byName(reply.node)
      const better = node === undefined ? undefined : askAgain(method, reply, this.#kept, node, parts)
      if (better !== undefined) {
        parts.askedAgain.behind++
        this.#kept = better
        return undefined
      }
    }
    const out = reply.withId(this.call.idJson)
    out.attempts = this.tried.size - this.#avoided
    return out
  }

  ending(why: 'no-node' | 'no-time'): Answer | undefined {
    if (why === 'no-node' && this.#lacking !== undefined) this.parts.learning.noneServes(this.call.kind, this.call.method, this.#lacking)
    return this.#kept?.withId(this.call.idJson)
  }

  final(err: UpstreamTransportError): boolean {
    return notSafeToRepeat(this.call.method) && err.requestSent
  }

  noneLeft(): Error {
    return this.parts.noneLeft(this.call.kind)
  }
}
