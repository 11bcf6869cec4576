import { systemClock, type Clock } from '../../actors/runtime/clock.js'
import type { NodeKind } from '../core/node-kind.js'
import { MethodServedByNoNode, NoHealthyUpstream } from './errors.js'
import type { Answer } from './answer.js'
import type { ConsensusCounters, ConsensusPolicy } from './consensus.js'
import { ConsensusCalls } from './consensus-call.js'
import { Hedging, type HedgeCounters } from './hedged-call.js'
import { MethodLearning } from './method-learning.js'
import { sendAsOneBatch, type BatchedCall } from './one-batch.js'
import type { UpstreamNode } from './node.js'
import { NodeChooser, type Choice } from './node-choice.js'
import { withFailover } from './failover.js'
import { PoolAttempts, type PoolParts } from './pool-attempts.js'
import { notSafeToRepeat, type AskedAgainCounters, type PoolCall, type PoolCallOptions } from './pool-call.js'
import type { PoolView } from './pool-view.js'
import { whyNoneOf } from './why-none.js'

export type { AskedAgainCounters, PoolCall, PoolCallOptions } from './pool-call.js'

/** What a reload gives a network's pool (UpstreamPool.apply): its nodes and the network's settings. */
export interface PoolSettings {
  nodes: readonly UpstreamNode[]
  /** undefined: the network asks for no consensus. */
  consensus: ConsensusPolicy | undefined
  verify?: 'off' | 'reads' | 'calls'
  chainId: number
  verifyCheckpoint?: { number: number; hash: string }
}

/**
 * The nodes of one network, by kind. Each call goes to the node NodeChooser picks (healthy, serving
 * the method, at the head, the best by score, a share probing the others), fails over to another
 * of the kind on a transport failure or time-out, and is asked again of another node when the
 * answer shows the node behind or lacking the method (PoolAttempts). The attempts are withFailover's;
 * hedging wraps an attempt, consensus takes the whole call. Not on an answer over the size
 * limit: another node would send the same answer (the client must ask for less). docs/upstream-selection.md
 * @example
 * const reply = await pool.call({ kind: 'full', method: 'eth_blockNumber', params: [], idJson: '1', timeoutMs: 5000 })
 * reply.text // '{"jsonrpc":"2.0","id":1,"result":"0x10"}'
 */
export class UpstreamPool implements PoolView {
  readonly network: string
  /** Replaced whole at a reload (see apply): a call in flight keeps the node it is on. */
  #byKind: Record<NodeKind, UpstreamNode[]> = { full: [], archive: [] }
  readonly #chooser: Record<NodeKind, NodeChooser> = { full: new NodeChooser(), archive: new NodeChooser() }
  readonly #clock: Clock
  /** Answers asked again of another node, for /metrics (see call()). */
  readonly askedAgain: AskedAgainCounters = { behind: 0, methodMissing: 0 }
  /** The network's consensus settings, undefined when it asks for none (replaced at a reload). */
  consensus: ConsensusPolicy | undefined
  /** The network's `verify` setting: `reads` proves reads against trusted headers, `calls` eth_call too (src/verified-reads; replaced at a reload). */
  verify: 'off' | 'reads' | 'calls'
  /** The network's chain id (the EVM that runs a verified eth_call needs it). */
  chainId: number
  /** The network's `verifyCheckpoint`: trusted headers must link to it by parent hashes (src/verified-reads/checkpoint-chain.ts; replaced at a reload). */
  verifyCheckpoint: { number: number; hash: string } | undefined
  readonly #learning: MethodLearning
  readonly #voting: ConsensusCalls
  readonly #hedging = new Hedging()
  /** What a call's attempts need of the pool (PoolAttempts), made once. */
  readonly #parts: PoolParts

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
    this.#parts = {
      learning: this.#learning,
      hedging: this.#hedging,
      askedAgain: this.askedAgain,
      choose: (kind, tried, method, opts) => this.#choose(kind, tried, method, opts),
      named: (name, tried) => this.#named(name, tried),
      byName: (name) => this.#byName(name),
      nodes: () => this.nodes(),
      noneLeft: (kind) => new NoHealthyUpstream({ network: this.network, kind, why: this.whyNone(kind) }),
    }
  }

  /**
   * Serve with these nodes and settings from now on (a reload). The pool object stays, so what
   * holds it (admission, the subscriptions hub, the metrics) needs no news; a call in flight
   * finishes on the node it is on and fails over to the new nodes. Nodes kept keep their
   * disputes; the dropped ones' go.
   */
  apply(next: PoolSettings): void {
    const byKind: Record<NodeKind, UpstreamNode[]> = { full: [], archive: [] }
    for (const node of next.nodes) byKind[node.kind].push(node)
    this.#byKind = byKind
    this.consensus = next.consensus
    this.verify = next.verify ?? 'off'
    this.chainId = next.chainId
    this.verifyCheckpoint = next.verifyCheckpoint
    this.#voting.keepOnly(next.nodes)
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
   * A node's answer failed a check of src/proofs (a proof, a header's hash): counted per check, and
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
   * Send one call to a healthy node of its kind, failing over to another one of the same kind
   * when a node fails, and return the node's answer with the client's id spliced in. The call is
   * handed to each node as it is (PoolAttempts).
   * @throws NoHealthyUpstream no healthy node of the kind to try
   * @throws UpstreamTimeout / UpstreamTransportError every node tried failed (the last failure)
   */
  call(c: PoolCall): Promise<Answer> {
    if (c.node === undefined && this.#learning.servedByNone(c.kind, c.method)) {
      return Promise.reject(new MethodServedByNoNode({ network: this.network, kind: c.kind, method: c.method }))
    }
    // Consensus is a policy around the call: several nodes asked at once, the fan-out its failover and its hedge.
    if (this.consensus !== undefined && c.node === undefined && c.checked !== true && this.consensus.methods.has(c.method)) {
      return this.#voting.call(this.consensus, c).then((answer) => answer.withId(c.idJson))
    }
    const tried = new Set<UpstreamNode>()
    if (c.avoid) for (const n of this.nodes()) if (c.avoid.has(n.name)) tried.add(n)
    return withFailover(this.#clock, c, tried, new PoolAttempts(this.#parts, c, tried))
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
    return whyNoneOf(this.#byKind[kind])
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
