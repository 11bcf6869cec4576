import type { Clock } from '../../actors/runtime/clock.js'
import type { NodeKind } from '../core/node-kind.js'
import type { Answer } from './answer.js'
import { answerValue, CONSENSUS_DEFAULTS, Disputes, type ConsensusCounters, type ConsensusPolicy } from './consensus.js'
import { isUpstreamFailure, NodesDisagree, NoHealthyUpstream, UpstreamAnswerTooLarge, type UpstreamTransportError } from './errors.js'
import type { MethodLearning } from './method-learning.js'
import { saysMethodMissing } from './method-missing.js'
import type { NodeCall, UpstreamNode } from './node.js'
import { highestHead } from './node-choice.js'
import type { PoolView } from './pool-view.js'

/** What a consensus call reads of the call (a PoolCall is one): its kind, its time-outs, the nodes to pass over and the newest block it names. */
export interface ConsensusCall extends NodeCall {
  readonly kind: NodeKind
  readonly timeoutMs: number
  readonly deadlineMs?: number
  readonly avoid?: ReadonlySet<string>
  readonly minBlock?: number
}

/**
 * The calls of a pool that consensus checks (networks.<slug>.consensus): each sent at once to
 * `participants` nodes of the kind at the network's head (best by score first; no probes, no
 * hedges: the fan-out is the hedge); the answer of the first `agreement` nodes whose answers are
 * the same JSON value (see answerValue) is the call's, without waiting for the rest. A node that
 * fails, or lacks the method, is replaced by another while one is left and time remains; its
 * answer is not a vote. When every node asked has answered and none agreed: NodesDisagree. Once
 * all have answered, a node whose answer differed from the agreed one is counted (Disputes); past
 * the threshold it sits out, unless that would leave fewer than `agreement` nodes of the kind to
 * take calls. docs/upstream-selection.md
 * @example
 * const voting = new ConsensusCalls(pool, learning, clock)
 * const answer = await voting.call(policy, { kind: 'full', method: 'eth_getBalance', params: [addr, 'latest'], timeoutMs: 5000 })
 * answer.consensus // '2/3'
 */
export class ConsensusCalls {
  readonly counters: ConsensusCounters = { agreed: 0, disagreed: 0, fanOut: 0 }
  /** Each node's disputes (answers against an agreement), made at its first. */
  readonly #disputes = new Map<UpstreamNode, Disputes>()

  constructor(
    private readonly pool: PoolView,
    private readonly learning: MethodLearning,
    private readonly clock: Clock,
  ) {}

  /** A node's disputes and sit-outs so far (for /metrics). */
  disputesOf(node: UpstreamNode): { disputes: number; sitOuts: number } {
    const d = this.#disputes.get(node)
    return { disputes: d?.total ?? 0, sitOuts: d?.sitOuts ?? 0 }
  }

  /** The pool's nodes changed (a reload): nodes kept keep their disputes, the dropped ones' go. */
  keepOnly(nodes: readonly UpstreamNode[]): void {
    for (const node of this.#disputes.keys()) if (!nodes.includes(node)) this.#disputes.delete(node)
  }

  /**
   * One call under consensus; its answer carries `consensus` (agreeing/participants) and `attempts`.
   * @throws NoHealthyUpstream fewer healthy nodes than `agreement` / NodesDisagree / the last failure when too many failed
   */
  call(policy: ConsensusPolicy, opts: ConsensusCall): Promise<Answer> {
    const { kind, method } = opts
    const deadline = this.clock.now() + (opts.deadlineMs ?? 2 * opts.timeoutMs)
    const nodes = this.pool.nodesOf(kind)
    const healthy = nodes.filter((n) => n.healthy() && !opts.avoid?.has(n.name)).length
    if (healthy < policy.agreement) {
      return Promise.reject(
        new NoHealthyUpstream({
          network: this.pool.network,
          kind,
          why: `consensus needs ${policy.agreement} nodes to agree and ${healthy} of ${nodes.length} take calls: ${this.pool.whyNone(kind)}`,
        }),
      )
    }
    // Nodes at the network's head first: a node a block behind answers a `latest` read otherwise.
    const top = highestHead(nodes)
    const minBlock = top === undefined ? opts.minBlock : Math.max(top, opts.minBlock ?? 0)
    const chooser = this.pool.chooserOf(kind)
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
        const left = deadline - this.clock.now()
        if (left <= 0) return false
        const node = chooser.choose(nodes, asked, { method, minBlock, mayProbe: false, heavy: opts.heavy, account: opts.account })?.node
        if (node === undefined) return false
        asked.add(node)
        running++
        this.counters.fanOut++
        node.call(opts, Math.min(opts.timeoutMs, left)).then(
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
            this.learning.served(method, lacking)
            lacking = undefined
          }
          const value = answerValue(answer)
          voteOf.set(node, value)
          const group = votes.get(value) ?? []
          group.push(answer)
          votes.set(value, group)
          if (winner === undefined && group.length >= policy.agreement) {
            winner = value
            this.counters.agreed++
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
            if (lacking !== undefined) this.learning.noneServes(kind, method, lacking)
            const out = missing.withId('null')
            out.attempts = asked.size - avoided
            resolve(out)
            return
          }
          reject(this.#noAgreement(policy, kind, votes, lastFailure))
          return
        }
        if (winner === '') return
        for (const [node, value] of voteOf) if (value !== winner) this.#disputed(policy, node)
      }
      for (let i = 0; i < policy.participants; i++) if (!ask()) break
      if (running === 0) done()
    })
  }

  /** Why every node asked answered and none agreed: too few answers (why the others did not), or a disagreement. */
  #noAgreement(policy: ConsensusPolicy, kind: NodeKind, votes: ReadonlyMap<string, Answer[]>, lastFailure: UpstreamTransportError | undefined): Error {
    if (votes.size <= 1) {
      const answers = votes.size === 0 ? 0 : [...votes.values()][0].length
      return (
        lastFailure ??
        new NoHealthyUpstream({ network: this.pool.network, kind, why: `consensus needs ${policy.agreement} nodes to agree and ${answers} answered` })
      )
    }
    this.counters.disagreed++
    const sizes = [...votes.values()].map((g) => g.length).sort((a, b) => b - a)
    const answers = sizes.reduce((a, b) => a + b, 0)
    return new NodesDisagree(
      `${answers} node${answers === 1 ? '' : 's'} gave ${votes.size} different answer${votes.size === 1 ? '' : 's'} (${sizes.join(' against ')}); ${policy.agreement} must agree`,
    )
  }

  /**
   * A node answered against an agreement, or failed a check (src/verified-reads): counted; past the
   * threshold it sits out. Without a consensus policy, the consensus defaults and an agreement of
   * one count (a node sits out only while another healthy node of its kind is left).
   */
  disputed(node: UpstreamNode, policy: ConsensusPolicy | undefined): void {
    this.#disputed(policy ?? { ...CONSENSUS_DEFAULTS, participants: 1, agreement: 1, methods: new Set() }, node)
  }

  #disputed(policy: ConsensusPolicy, node: UpstreamNode): void {
    let d = this.#disputes.get(node)
    if (d === undefined) {
      d = new Disputes({ disputeWindowMs: policy.disputeWindowMs, disputeThreshold: policy.disputeThreshold, clock: this.clock })
      this.#disputes.set(node, d)
    }
    if (!d.record()) return
    const others = this.pool.nodesOf(node.kind).filter((n) => n !== node && n.healthy()).length
    if (others < policy.agreement) return
    node.sitOut(policy.sitOutMs)
    d.sitOuts++
  }
}
