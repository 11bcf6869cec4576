import { systemClock, type Clock } from '../../actors/runtime/clock.js'
import type { NodeKind } from '../core/node-kind.js'
import {
  isUpstreamFailure,
  MethodServedByNoNode,
  NodesDisagree,
  NoHealthyUpstream,
  UpstreamAnswerTooLarge,
  UpstreamTimeout,
  type UpstreamTransportError,
} from './errors.js'
import type { Answer } from './answer.js'
import { blockNumberIn, emptyWhenBehind } from './answer-checks.js'
import { saysMethodMissing } from './method-missing.js'
import { MethodsLacking } from './methods-lacking.js'
import type { NodeCallOptions, UpstreamNode } from './node.js'
import { highestHead, NodeChooser, type Choice } from './node-choice.js'
import { Disputes, answerValue, type ConsensusCounters, type ConsensusPolicy } from './consensus.js'

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
}

/** Latency samples the best node needs before its p95 is trusted for hedging. */
const HEDGE_MIN_SAMPLES = 20

/** Answers asked again of another node, by why, for /metrics. */
export interface AskedAgainCounters {
  /** An eth_blockNumber below the network's head, or an empty answer from a node behind it. */
  behind: number
  /** A "method not found" from a node while another may serve the method. */
  methodMissing: number
}

/** Hedges started and won, for /metrics. */
export interface HedgeCounters {
  started: number
  won: number
}

/**
 * Methods that must not be sent twice. After a time-out or a reset the first node may have
 * received the transaction and broadcast it; sent again elsewhere, the answer would be
 * "already known" or "nonce too low" in place of the hash, and a client that believes it
 * failed may sign a replacement (a double payment). So these fail over only when we KNOW the
 * first node never got the request (connection refused: requestSent false).
 */
const NOT_SAFE_TO_REPEAT: ReadonlySet<string> = new Set(['eth_sendRawTransaction', 'eth_sendTransaction'])

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
export class UpstreamPool {
  readonly network: string
  /** Replaced whole at a reload (see reconfigure): a call in flight keeps the node it is on. */
  #byKind: Record<NodeKind, UpstreamNode[]> = { full: [], archive: [] }
  readonly #chooser: Record<NodeKind, NodeChooser> = { full: new NodeChooser(), archive: new NodeChooser() }
  readonly #clock: Clock
  readonly hedges: HedgeCounters = { started: 0, won: 0 }
  /** Answers asked again of another node, for /metrics (see call()). */
  readonly askedAgain: AskedAgainCounters = { behind: 0, methodMissing: 0 }
  /** The network's consensus settings, undefined when it asks for none (replaced at a reload). */
  consensus: ConsensusPolicy | undefined
  /** The consensus section of the config it was last given (to tell a reload's change of it). */
  consensusConfig: unknown
  readonly consensusCounters: ConsensusCounters = { agreed: 0, disagreed: 0, fanOut: 0 }
  /** Each node's disputes (answers against an agreement), made at its first. */
  readonly #disputes = new Map<UpstreamNode, Disputes>()
  /**
   * Methods every node of a kind said it lacks, in one call: calls for them get -32601 without
   * asking a node, for the set-aside time (see #noneServes).
   */
  readonly #servedByNone: Record<NodeKind, MethodsLacking>

  constructor(network: string, nodes: UpstreamNode[], opts: { clock?: Clock; consensus?: ConsensusPolicy } = {}) {
    this.network = network
    for (const node of nodes) this.#byKind[node.kind].push(node)
    this.#clock = opts.clock ?? systemClock
    this.consensus = opts.consensus
    this.#servedByNone = { full: new MethodsLacking(undefined, this.#clock), archive: new MethodsLacking(undefined, this.#clock) }
  }

  /**
   * Serve with these nodes and settings from now on (a reload). The pool object stays, so what
   * holds it (admission, the subscriptions hub, the metrics) needs no news; a call in flight
   * finishes on the node it is on and fails over to the new nodes. Nodes kept keep their
   * disputes; the dropped ones' go.
   */
  reconfigure(nodes: readonly UpstreamNode[], consensus: ConsensusPolicy | undefined): void {
    const byKind: Record<NodeKind, UpstreamNode[]> = { full: [], archive: [] }
    for (const node of nodes) byKind[node.kind].push(node)
    this.#byKind = byKind
    this.consensus = consensus
    for (const node of this.#disputes.keys()) if (!nodes.includes(node)) this.#disputes.delete(node)
    // New nodes may serve what the old ones lacked.
    this.#servedByNone.full.clear()
    this.#servedByNone.archive.clear()
  }

  /** A node's disputes and sit-outs so far (for /metrics). */
  disputesOf(node: UpstreamNode): { disputes: number; sitOuts: number } {
    const d = this.#disputes.get(node)
    return { disputes: d?.total ?? 0, sitOuts: d?.sitOuts ?? 0 }
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
    if (opts.node === undefined && this.#servedByNone[kind].has(method)) throw new MethodServedByNoNode({ network: this.network, kind, method })
    if (this.consensus !== undefined && opts.node === undefined && this.consensus.methods.has(method)) {
      return (await this.#agreed(this.consensus, kind, method, params, opts)).withId(clientIdJson)
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
        if (lacking !== undefined) this.#noneServes(kind, method, lacking)
        if (kept !== undefined) return kept.withId(clientIdJson)
        throw lastFailure ?? new NoHealthyUpstream({ network: this.network, kind, why: this.#whyNone(kind) })
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
        const hedgeMs = this.#hedgeDelay(choice, opts)
        const reply =
          hedgeMs === undefined
            ? await node.call(method, params, timeoutMs, opts)
            : await this.#hedged(kind, choice, method, params, timeoutMs, hedgeMs, tried, opts)
        if (opts.node === undefined) {
          // Error answers only: an ordinary answer is never read for this.
          if (reply.isError && saysMethodMissing(method, reply)) {
            const by = this.#byName(reply.node)
            if (by !== undefined) (lacking ??= []).push(by)
            this.askedAgain.methodMissing++
            kept ??= reply
            continue
          }
          if (lacking !== undefined) this.#served(method, lacking)
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
        if (NOT_SAFE_TO_REPEAT.has(method) && err.requestSent) throw err
        lastFailure = err
      }
    }
  }

  /**
   * Whether an answer should be asked again of another node: the answer to keep meanwhile, or
   * undefined to give this one to the client. An eth_blockNumber below the highest head a node
   * of the network has shown (the head never goes back); an empty answer (a null block,
   * transaction or receipt, "header not found") from a node behind that head. ("Method not found"
   * is judged in call(): see #served.)
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
   * One call under consensus: sent at once to `participants` nodes of the kind at the network's
   * head (best by score first; no probes, no hedges: the fan-out is the hedge); the answer of the
   * first `agreement` nodes whose answers are the same JSON value (see answerValue) is the call's,
   * without waiting for the rest. A node that fails, or lacks the method, is replaced by another
   * while one is left and time remains; its answer is not a vote. When every node asked has
   * answered and none agreed: NodesDisagree. Once all have answered, a node whose answer differed
   * from the agreed one is counted (Disputes); past the threshold it sits out, unless that would
   * leave fewer than `agreement` nodes of the kind to take calls.
   * @throws NoHealthyUpstream fewer healthy nodes than `agreement` / NodesDisagree / the last failure when too many failed
   */
  #agreed(policy: ConsensusPolicy, kind: NodeKind, method: string, params: unknown, opts: PoolCallOptions): Promise<Answer> {
    const deadline = this.#clock.now() + (opts.deadlineMs ?? 2 * opts.timeoutMs)
    const nodes = this.#byKind[kind]
    const healthy = nodes.filter((n) => n.healthy() && !opts.avoid?.has(n.name)).length
    if (healthy < policy.agreement) {
      return Promise.reject(
        new NoHealthyUpstream({
          network: this.network,
          kind,
          why: `consensus needs ${policy.agreement} nodes to agree and ${healthy} of ${nodes.length} take calls: ${this.#whyNone(kind)}`,
        }),
      )
    }
    // Nodes at the network's head first: a node a block behind answers a `latest` read otherwise.
    const top = highestHead(nodes)
    const minBlock = top === undefined ? opts.minBlock : Math.max(top, opts.minBlock ?? 0)
    const asked = new Set<UpstreamNode>()
    if (opts.avoid) for (const n of nodes) if (opts.avoid.has(n.name)) asked.add(n)
    const avoided = asked.size
    const votes = new Map<string, Answer[]>()
    const voteOf = new Map<UpstreamNode, string>()
    let running = 0
    let lastFailure: UpstreamTransportError | undefined
    let winner: string | undefined
    // Nodes that said they lack the method before any node served it, and the first such answer.
    let lacking: UpstreamNode[] | undefined
    let served = false
    let missing: Answer | undefined
    return new Promise<Answer>((resolve, reject) => {
      const ask = (): boolean => {
        const left = deadline - this.#clock.now()
        if (left <= 0) return false
        const node = this.#chooser[kind].choose(nodes, asked, { method, minBlock, mayProbe: false, heavy: opts.heavy, account: opts.account })?.node
        if (node === undefined) return false
        asked.add(node)
        running++
        this.consensusCounters.fanOut++
        node.call(method, params, Math.min(opts.timeoutMs, left), opts).then(
          (answer) => answered(node, answer),
          (err: unknown) => failed(err),
        )
        return true
      }
      const answered = (node: UpstreamNode, answer: Answer): void => {
        running--
        if (answer.isError && saysMethodMissing(method, answer)) {
          if (served) node.lacking.lacks(method)
          else (lacking ??= []).push(node)
          missing ??= answer
          if (winner === undefined) ask()
        } else {
          served = true
          if (lacking !== undefined) {
            this.#served(method, lacking)
            lacking = undefined
          }
          const value = answerValue(answer)
          voteOf.set(node, value)
          const group = votes.get(value) ?? []
          group.push(answer)
          votes.set(value, group)
          if (winner === undefined && group.length >= policy.agreement) {
            winner = value
            this.consensusCounters.agreed++
            const out = group[0].withId('null')
            out.attempts = asked.size - avoided
            out.consensus = `${group.length}/${policy.participants}`
            resolve(out)
          }
        }
        done()
      }
      const failed = (err: unknown): void => {
        running--
        if (isUpstreamFailure(err) && !(err instanceof UpstreamAnswerTooLarge)) {
          lastFailure = err
          if (winner === undefined) ask()
        } else if (winner === undefined) {
          winner = ''
          reject(err)
        }
        done()
      }
      // Every node asked has answered: count the minority, or tell the client there is no agreement.
      const done = (): void => {
        if (running > 0) return
        if (winner === undefined) {
          winner = ''
          if (votes.size === 0 && missing !== undefined) {
            // No node serves the method: the client gets a node's own "not found".
            if (lacking !== undefined) this.#noneServes(kind, method, lacking)
            const out = missing.withId('null')
            out.attempts = asked.size - avoided
            resolve(out)
            return
          }
          if (votes.size <= 1) {
            // Too few answers, not a disagreement: why the others did not answer.
            const answers = votes.size === 0 ? 0 : [...votes.values()][0].length
            reject(
              lastFailure ??
                new NoHealthyUpstream({ network: this.network, kind, why: `consensus needs ${policy.agreement} nodes to agree and ${answers} answered` }),
            )
            return
          }
          this.consensusCounters.disagreed++
          const sizes = [...votes.values()].map((g) => g.length).sort((a, b) => b - a)
          const answers = sizes.reduce((a, b) => a + b, 0)
          reject(
            new NodesDisagree(
              `${answers} node${answers === 1 ? '' : 's'} gave ${votes.size} different answer${votes.size === 1 ? '' : 's'} (${sizes.join(' against ')}); ${policy.agreement} must agree`,
            ),
          )
          return
        }
        if (winner === '') return
        for (const [node, value] of voteOf) if (value !== winner) this.#disputed(policy, node)
      }
      for (let i = 0; i < policy.participants; i++) if (!ask()) break
      if (running === 0) done()
    })
  }

  /**
   * Another node of the kind served `method` in the call in which `lacking` said they lack it: it
   * is set aside on them (their calls for it go to the others, see MethodsLacking). Only then: a
   * node's "not found" alone sets nothing aside, so no answer makes every node look lacking and
   * send the calls to a node behind the head.
   */
  #served(method: string, lacking: readonly UpstreamNode[]): void {
    for (const node of lacking) node.lacking.lacks(method)
  }

  /**
   * Every node of the kind said in one call that it lacks `method`: for the set-aside time its
   * calls get -32601 without asking a node. Without this, each call of a method no node serves
   * asked every node of the kind in turn (a tenant's loop of such calls, times the nodes); with it,
   * none. Only a node's own "method not found" code counts (saysMethodMissing), which no tenant's
   * params or contract can produce, and only methods of the table are remembered.
   */
  #noneServes(kind: NodeKind, method: string, lacking: readonly UpstreamNode[]): void {
    const nodes = this.#byKind[kind]
    if (nodes.length === 0 || !nodes.every((n) => lacking.includes(n))) return
    this.#servedByNone[kind].lacks(method, nodes[0].lacking.setAsideMs)
  }

  /** A node answered against an agreement: counted; past the threshold it sits out (see #agreed). */
  #disputed(policy: ConsensusPolicy, node: UpstreamNode): void {
    let d = this.#disputes.get(node)
    if (d === undefined) {
      d = new Disputes({ disputeWindowMs: policy.disputeWindowMs, disputeThreshold: policy.disputeThreshold, clock: this.#clock })
      this.#disputes.set(node, d)
    }
    if (!d.record()) return
    const others = this.#byKind[node.kind].filter((n) => n !== node && n.healthy()).length
    if (others < policy.agreement) return
    node.sitOut(policy.sitOutMs)
    d.sitOuts++
  }

  /** How long to wait before hedging this attempt: a probe always (to the best node), a read when hedging is on. */
  #hedgeDelay(choice: Choice, opts: PoolCallOptions): number | undefined {
    if (opts.node !== undefined || opts.read !== true) return undefined
    const best = choice.best.latency
    if (choice.probe) {
      // The client must not wait for the node being measured: the best node's usual time, then it.
      const p95 = best.p95()
      return Number.isNaN(p95) ? undefined : Math.max(1, Math.ceil(p95))
    }
    if (opts.hedge === undefined) return undefined
    // Until the best node's p95 is trusted, the longest wait: a read on a hung node is hedged all
    // the same. (A node that became best on a few probes got no hedge at all before: a read on it,
    // hung, waited for the whole time-out.)
    if (best.count < HEDGE_MIN_SAMPLES) return opts.hedge.maxDelayMs
    return Math.min(opts.hedge.maxDelayMs, Math.max(opts.hedge.minDelayMs, Math.ceil(best.p95())))
  }

  /**
   * Send several calls to ONE node as a JSON-RPC batch (one frame or one request instead of one
   * per call), with the same failover as call(). Each answer has the client's id spliced in.
   * A call comes back undefined when the caller must send it on its own with call(): methods
   * that are not safe to repeat (so that their failover rules stay those of call()), and calls
   * the node's answer did not cover.
   * @throws NoHealthyUpstream / UpstreamTimeout / UpstreamTransportError as call(), for the whole batch
   */
  async callBatch(
    kind: NodeKind,
    calls: ReadonlyArray<{ method: string; params: unknown; paramsJson?: string; clientIdJson: string }>,
    opts: PoolCallOptions,
  ): Promise<Array<Answer | undefined>> {
    const out = new Array<Answer | undefined>(calls.length)
    // Identical calls of a client batch were merged by the dispatcher (the one place that decides
    // which calls are alike): what comes here is sent as it is, but for what must not be repeated.
    // index: where each sent call stands in `calls`; undefined when every call is sent.
    // Calls consensus checks go alone too: call() asks several nodes for each.
    const alone = (m: string): boolean => NOT_SAFE_TO_REPEAT.has(m) || this.consensus?.methods.has(m) === true
    const index = calls.some((c) => alone(c.method)) ? calls.flatMap((c, i) => (alone(c.method) ? [] : [i])) : undefined
    const sent = index === undefined ? calls : index.map((i) => calls[i])
    if (sent.length === 0) return out
    const deadline = this.#clock.now() + (opts.deadlineMs ?? 2 * opts.timeoutMs)
    const tried = new Set<UpstreamNode>()
    let lastFailure: UpstreamTransportError | undefined
    for (;;) {
      const node = this.#choose(kind, tried, undefined, { timeoutMs: opts.timeoutMs, account: opts.account })?.node
      if (node === undefined) throw lastFailure ?? new NoHealthyUpstream({ network: this.network, kind, why: this.#whyNone(kind) })
      const left = deadline - this.#clock.now()
      if (left <= 0) throw lastFailure ?? new UpstreamTimeout({ node: node.name, timeoutMs: 0 })
      tried.add(node)
      try {
        const replies = await node.callBatch(sent, Math.min(opts.timeoutMs, left), opts.account)
        for (let k = 0; k < replies.length; k++) {
          const r = replies[k]
          if (r !== undefined) out[index === undefined ? k : index[k]] = r.withId(sent[k].clientIdJson)
        }
        return out
      } catch (err) {
        if (!isUpstreamFailure(err) || err instanceof UpstreamAnswerTooLarge) throw err
        lastFailure = err
      }
    }
  }

  /**
   * One attempt on the chosen node, and after `hedgeMs` without an answer one more on another
   * healthy node of the kind (the best one for a probe): the first answer wins. Rejects with the
   * last failure when both fail.
   */
  #hedged(
    kind: NodeKind,
    choice: Choice,
    method: string,
    params: unknown,
    timeoutMs: number,
    hedgeMs: number,
    tried: Set<UpstreamNode>,
    opts: PoolCallOptions,
  ): Promise<Answer> {
    const first = choice.node
    return new Promise((resolve, reject) => {
      let running = 1
      let settled = false
      const win = (by: UpstreamNode) => (reply: Answer) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        if (by !== first) this.hedges.won++
        resolve(reply)
      }
      const lose = (err: unknown) => {
        running--
        if (settled) return
        // A failure of one while the other runs is not the answer: wait for the other.
        if (running > 0 && isUpstreamFailure(err)) return
        settled = true
        clearTimeout(timer)
        reject(err)
      }
      const timer = setTimeout(() => {
        if (settled || hedgeMs >= timeoutMs) return
        const second = choice.probe && !tried.has(choice.best) ? choice.best : this.#choose(kind, tried, method, { ...opts, read: false })?.node
        // A hedge is extra load: never one that would wait for a slot of a full node.
        if (second === undefined || !second.hasRoom(opts.account)) return
        tried.add(second)
        running++
        this.hedges.started++
        second.call(method, params, timeoutMs - hedgeMs, opts).then(win(second), lose)
      }, hedgeMs)
      first.call(method, params, timeoutMs, opts).then(win(first), lose)
    })
  }

  /** Each node of the kind and why it takes no call, for the 503 message. */
  #whyNone(kind: NodeKind): string {
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
