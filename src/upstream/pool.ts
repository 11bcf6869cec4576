import { systemClock, type Clock } from '../../actors/runtime/clock.js'
import type { NodeKind } from '../core/node-kind.js'
import { METHODS } from '../rpc/method-table.js'
import { isUpstreamFailure, MethodServedByNoNode, NoHealthyUpstream, UpstreamAnswerTooLarge, UpstreamTimeout, type UpstreamTransportError } from './errors.js'
import type { Answer } from './answer.js'
import { blockNumberIn, emptyWhenBehind } from './answer-checks.js'
import type { ConsensusCounters, ConsensusPolicy } from './consensus.js'
import { ConsensusCalls } from './consensus-call.js'
import { Hedging, type HedgeCounters } from './hedged-call.js'
import { MethodLearning } from './method-learning.js'
import { sendAsOneBatch, type BatchedCall } from './one-batch.js'
import { saysMethodMissing } from './method-missing.js'
import type { NodeCallOptions, UpstreamNode } from './node.js'
import { highestHead, NodeChooser, type Choice } from './node-choice.js'
import type { PoolView } from './pool-view.js'

export interface PoolCallOptions extends NodeCallOptions {
  /** Time-out of one attempt on one node, in ms. */
  timeoutMs: number
  /**
   * Budget of the whole call in ms, failovers included (default 2 × timeoutMs): after a node
   * times out, another one gets what is left of it. Each attempt gets min(timeoutMs, what is left).
   */
  deadlineMs?: number
  /**
   * Send to this node only, with no failover (a filter lives on the node that created it). It is
   * tried even while marked unhealthy: no other node could answer.
   */
  node?: string
  /** Nodes not to try (a transaction re-sent after a node failed goes elsewhere). */
  avoid?: ReadonlySet<string>
  /**
   * A read: it may be hedged (when `hedge` is given) and may be a probe of a node outside the best
   * ones (always hedged to the best node). Transactions, filter calls and pinned calls are not.
   */
  read?: boolean
  /**
   * Hedging of reads: when the node asked has not answered after the best node's p95 (within
   * these bounds; maxDelayMs until the best node has HEDGE_MIN_SAMPLES), ask another healthy node of
   * the kind too, and take the first answer. The slower call is left to finish; its answer is dropped.
   */
  hedge?: { minDelayMs: number; maxDelayMs: number }
  /** The newest block the call names: nodes whose head is below it are passed over while another reaches it. */
  minBlock?: number
  /** The caller checks the answer itself (src/verified: a proof against a trusted header): no consensus vote. */
  checked?: boolean
}

/** Answers asked again of another node, by why, for /metrics. */
export interface AskedAgainCounters {
  /** An eth_blockNumber below the network's head, or an empty answer from a node behind it. */
  behind: number
  /** A "method not found" from a node while another may serve the method. */
  methodMissing: number
}

/**
 * Whether a method must not be sent twice: a signed transaction (the method table's `path: 'send'`).
 * After a time-out or a reset the first node may have received the transaction and broadcast it;
 * sent again elsewhere, the answer would be "already known" or "nonce too low" in place of the
 * hash, and a client that believes it failed may sign a replacement (a double payment). So these
 * fail over only when we KNOW the first node never got the request (connection refused:
 * requestSent false).
 */
export function notSafeToRepeat(method: string): boolean {
  return Object.hasOwn(METHODS, method) && METHODS[method].path === 'send'
}

/**
 * The nodes of one network, by kind. Each call goes to the node NodeChooser picks (healthy, serving
 * the method, at the head, the best by score, a share probing the others), fails over to another
 * of the kind on a transport failure or time-out, and is asked again of another node when the
 * answer shows the node behind or lacking the method (see #judge). Not on an answer over the size
 * limit: another node would send the same answer (the client must ask for less). docs/upstream-selection.md
 * @example
 * const reply = await pool.call('full', 'eth_blockNumber', [], '1', { timeoutMs: 5000 })
 * reply.text // '{"jsonrpc":"2.0","id":1,"result":"0x10"}'
 */
export class UpstreamPool implements PoolView {
  readonly network: string
  /** Replaced whole at a reload (see reconfigure): a call in flight keeps the node it is on. */
  #byKind: Record<NodeKind, UpstreamNode[]> = { full: [], archive: [] }
  readonly #chooser: Record<NodeKind, NodeChooser> = { full: new NodeChooser(), archive: new NodeChooser() }
  readonly #clock: Clock
  /** Answers asked again of another node, for /metrics (see call()). */
  readonly askedAgain: AskedAgainCounters = { behind: 0, methodMissing: 0 }
  /** The network's consensus settings, undefined when it asks for none (replaced at a reload). */
  consensus: ConsensusPolicy | undefined
  /** The network's `verify` setting: `reads` proves reads against trusted headers, `calls` eth_call too (src/verified; replaced at a reload). */
  verify: 'off' | 'reads' | 'calls'
  /** The network's chain id (the EVM that runs a verified eth_call needs it). */
  chainId: number
  /** The network's `verifyCheckpoint`: trusted headers must link to it by parent hashes (src/verified/checkpoint-chain.ts; replaced at a reload). */
  verifyCheckpoint: { number: number; hash: string } | undefined
  readonly #learning: MethodLearning
  readonly #voting: ConsensusCalls
  readonly #hedging = new Hedging()

  constructor(
    network: string,
    nodes: UpstreamNode[],
    opts: {
      clock?: Clock
      consensus?: ConsensusPolicy
      verify?: 'off' | 'reads' | 'calls'
      chainId?: number
      verifyCheckpoint?: { number: number; hash: string }
    } = {},
  ) {
    this.network = network
    for (const node of nodes) this.#byKind[node.kind].push(node)
    this.#clock = opts.clock ?? systemClock
    this.consensus = opts.consensus
    this.verify = opts.verify ?? 'off'
    this.chainId = opts.chainId ?? 1
    this.verifyCheckpoint = opts.verifyCheckpoint
    this.#learning = new MethodLearning(this, this.#clock)
    this.#voting = new ConsensusCalls(this, this.#learning, this.#clock)
  }

  /**
   * Serve with these nodes and settings from now on (a reload). The pool object stays, so what
   * holds it (admission, the subscriptions hub, the metrics) needs no news; a call in flight
   * finishes on the node it is on and fails over to the new nodes. Nodes kept keep their
   * disputes; the dropped ones' go.
   */
  reconfigure(
    nodes: readonly UpstreamNode[],
    consensus: ConsensusPolicy | undefined,
    verify: 'off' | 'reads' | 'calls' = 'off',
    chainId = this.chainId,
    verifyCheckpoint?: { number: number; hash: string },
  ): void {
    const byKind: Record<NodeKind, UpstreamNode[]> = { full: [], archive: [] }
    for (const node of nodes) byKind[node.kind].push(node)
    this.#byKind = byKind
    this.consensus = consensus
    this.verify = verify
    this.chainId = chainId
    this.verifyCheckpoint = verifyCheckpoint
    this.#voting.keepOnly(nodes)
    this.#learning.forget()
  }

  /** Calls answered by consensus, for /metrics. */
  get consensusCounters(): ConsensusCounters {
    return this.#voting.counters
  }

  /** Hedges started and won, for /metrics. */
  get hedges(): HedgeCounters {
    return this.#hedging.counters
  }

  /**
   * A node's answer failed a check of src/verify (a proof, a header's hash): counted per check, and
   * as a dispute of consensus (past the threshold the node sits out, see ConsensusCalls).
   */
  failedCheck(node: UpstreamNode, check: string): void {
    let byCheck = this.failedChecks.get(node.name)
    if (byCheck === undefined) this.failedChecks.set(node.name, (byCheck = new Map()))
    byCheck.set(check, (byCheck.get(check) ?? 0) + 1)
    this.#voting.disputed(node, this.consensus)
  }

  /** Answers that failed a check, by node name and check (for /metrics). */
  readonly failedChecks = new Map<string, Map<string, number>>()

  /** A node's disputes and sit-outs so far (for /metrics). */
  disputesOf(node: UpstreamNode): { disputes: number; sitOuts: number } {
    return this.#voting.disputesOf(node)
  }

  nodesOf(kind: NodeKind): readonly UpstreamNode[] {
    return this.#byKind[kind]
  }

  chooserOf(kind: NodeKind): NodeChooser {
    return this.#chooser[kind]
  }

  /** Nodes of this kind are configured (healthy or not). */
  hasKind(kind: NodeKind): boolean {
    return this.#byKind[kind].length > 0
  }

  /** Every node of the pool. */
  nodes(): readonly UpstreamNode[] {
    return [...this.#byKind.full, ...this.#byKind.archive]
  }

  /**
   * Send one call to a healthy node of `kind`, failing over to another one of the same kind
   * when a node fails, and return the node's answer with the client's id spliced in.
   * @param clientIdJson the client's id as JSON text (`1`, `"abc"`, `null`)
   * @throws NoHealthyUpstream no healthy node of the kind to try
   * @throws UpstreamTimeout / UpstreamTransportError every node tried failed (the last failure)
   */
  async call(kind: NodeKind, method: string, params: unknown, clientIdJson: string, opts: PoolCallOptions): Promise<Answer> {
    if (opts.node === undefined && this.#learning.servedByNone(kind, method)) throw new MethodServedByNoNode({ network: this.network, kind, method })
    if (this.consensus !== undefined && opts.node === undefined && opts.checked !== true && this.consensus.methods.has(method)) {
      return (await this.#voting.call(this.consensus, kind, method, params, opts)).withId(clientIdJson)
    }
    const deadline = this.#clock.now() + (opts.deadlineMs ?? 2 * opts.timeoutMs)
    const tried = new Set<UpstreamNode>()
    if (opts.avoid) for (const n of this.nodes()) if (opts.avoid.has(n.name)) tried.add(n)
    // Nodes passed over from the start are not attempts (avoid may name nodes of another pool).
    const avoided = tried.size
    let lastFailure: UpstreamTransportError | undefined
    // An answer judged not good enough (a node behind, a method the node lacks), kept in case no
    // other node does better: the client then gets it, a node's answer as it was.
    let kept: Answer | undefined
    // Nodes that said they lack the method in this call (made at the first): set aside once another serves it.
    let lacking: UpstreamNode[] | undefined
    for (;;) {
      const choice = opts.node === undefined ? this.#choose(kind, tried, method, opts) : this.#named(opts.node, tried)
      if (choice === undefined) {
        if (lacking !== undefined) this.#learning.noneServes(kind, method, lacking)
        if (kept !== undefined) return kept.withId(clientIdJson)
        throw lastFailure ?? new NoHealthyUpstream({ network: this.network, kind, why: this.whyNone(kind) })
      }
      const { node } = choice
      const left = deadline - this.#clock.now()
      if (left <= 0) {
        if (kept !== undefined) return kept.withId(clientIdJson)
        throw lastFailure ?? new UpstreamTimeout({ node: node.name, timeoutMs: 0 })
      }
      tried.add(node)
      try {
        const timeoutMs = Math.min(opts.timeoutMs, left)
        const hedgeMs = this.#hedging.delayFor(choice, opts)
        const reply =
          hedgeMs === undefined
            ? await node.call(method, params, timeoutMs, opts)
            : await this.#hedging.run(
                choice,
                method,
                params,
                timeoutMs,
                hedgeMs,
                tried,
                opts,
                () => this.#choose(kind, tried, method, { ...opts, read: false })?.node,
              )
        if (opts.node === undefined) {
          // Error answers only: an ordinary answer is never read for this.
          if (reply.isError && saysMethodMissing(method, reply)) {
            const by = this.#byName(reply.node)
            if (by !== undefined) (lacking ??= []).push(by)
            this.askedAgain.methodMissing++
            kept ??= reply
            continue
          }
          if (lacking !== undefined) this.#learning.served(method, lacking)
          const better = this.#judge(method, reply, kept)
          if (better !== undefined) {
            kept = better
            continue
          }
        }
        const out = reply.withId(clientIdJson)
        out.attempts = tried.size - avoided
        return out
      } catch (err) {
        if (!isUpstreamFailure(err) || err instanceof UpstreamAnswerTooLarge) throw err
        if (notSafeToRepeat(method) && err.requestSent) throw err
        lastFailure = err
      }
    }
  }

  /**
   * Whether an answer should be asked again of another node: the answer to keep meanwhile, or
   * undefined to give this one to the client. An eth_blockNumber below the highest head a node
   * of the network has shown (the head never goes back); an empty answer (a null block,
   * transaction or receipt, "header not found") from a node behind that head. ("Method not found"
   * is judged in call().)
   */
  #judge(method: string, reply: Answer, kept: Answer | undefined): Answer | undefined {
    const node = this.#byName(reply.node)
    if (node === undefined) return undefined
    if (method === 'eth_blockNumber') {
      const n = blockNumberIn(reply)
      if (n === undefined) return undefined
      node.sawHead(n)
      const top = highestHead(this.nodes())
      if (top === undefined || n >= top) return undefined
      this.askedAgain.behind++
      // The highest answer so far is the one kept.
      const keptN = kept === undefined ? undefined : blockNumberIn(kept)
      return keptN !== undefined && keptN >= n ? kept : reply
    }
    if (node.head !== undefined && emptyWhenBehind(method, reply)) {
      const top = highestHead(this.nodes())
      if (top === undefined || node.head >= top) return undefined
      this.askedAgain.behind++
      return kept ?? reply
    }
    return undefined
  }

  /**
   * Several calls to ONE node as a JSON-RPC batch, with the same failover as call() (see
   * sendAsOneBatch): each answer with the client's id; undefined for a call to send alone with call().
   */
  callBatch(kind: NodeKind, calls: ReadonlyArray<BatchedCall>, opts: PoolCallOptions): Promise<Array<Answer | undefined>> {
    // Calls consensus checks go alone too: call() asks several nodes for each.
    const alone = (m: string): boolean => notSafeToRepeat(m) || this.consensus?.methods.has(m) === true
    return sendAsOneBatch(calls, opts, {
      alone,
      clock: this.#clock,
      choose: (tried) => this.#choose(kind, tried, undefined, { timeoutMs: opts.timeoutMs, account: opts.account })?.node,
      noneLeft: () => new NoHealthyUpstream({ network: this.network, kind, why: this.whyNone(kind) }),
    })
  }

  /** Each node of the kind and why it takes no call, for the 503 message. */
  whyNone(kind: NodeKind): string {
    const nodes = this.#byKind[kind]
    if (nodes.length === 0) return 'none configured'
    const reasons: Record<string, string> = {
      failures: 'failing',
      'error-rate': 'failing too often',
      behind: 'behind the other nodes',
      'wrong-chain': 'on another chain',
      disputes: 'sitting out: it answered against the other nodes',
    }
    return nodes.map((n) => `${n.name}: ${reasons[n.outReason() ?? ''] ?? 'being probed'}`).join(', ')
  }

  /** Nodes of this kind that take calls now. */
  hasHealthy(kind: NodeKind): boolean {
    return this.#byKind[kind].some((node) => node.healthy())
  }

  #named(name: string, tried: ReadonlySet<UpstreamNode>): Choice | undefined {
    const node = this.#byName(name)
    return node === undefined || tried.has(node) ? undefined : { node, best: node, probe: false }
  }

  #byName(name: string): UpstreamNode | undefined {
    for (const n of this.#byKind.full) if (n.name === name) return n
    for (const n of this.#byKind.archive) if (n.name === name) return n
    return undefined
  }

  /** The node for the next attempt of a call (see NodeChooser), undefined when none is left to try. */
  #choose(kind: NodeKind, tried: ReadonlySet<UpstreamNode>, method: string | undefined, opts: PoolCallOptions): Choice | undefined {
    return this.#chooser[kind].choose(this.#byKind[kind], tried, {
      method,
      minBlock: opts.minBlock,
      mayProbe: opts.read === true,
      heavy: opts.heavy,
      account: opts.account,
    })
  }

  async close(): Promise<void> {
    await Promise.all(this.nodes().map((node) => node.close()))
  }
}
