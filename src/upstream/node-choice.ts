import type { UpstreamNode } from './node.js'
import type { CallFor } from './node-capacity.js'

/**
 * One call in this many goes to a node outside the best ones (a probe), so that a node that got
 * faster, or recovered, is measured again and comes back. Probes are hedged to the best node
 * after its p95: a probe never costs the client more than a few of the best node's latencies.
 */
export const PROBE_EVERY = 20

/** Nodes whose score is within this factor (plus CLOSE_MS) of the best one share the calls. */
const CLOSE_FACTOR = 1.5
const CLOSE_MS = 2

/** A node's error rate weighs as this many ms of latency per unit (a node failing half its calls scores +500 ms). */
const ERROR_WEIGHT_MS = 1_000

/**
 * The one scoring function of a node (lower is better): its median latency for this kind of call
 * (heavy calls have their own window; a node not measured on heavy calls yet is judged by its
 * ordinary ones), plus its error rate weighed in milliseconds. Undefined before its first measured call.
 */
export function scoreOf(node: UpstreamNode, heavy = false): number | undefined {
  let p50 = heavy ? node.heavyLatency.p50() : Number.NaN
  if (Number.isNaN(p50)) p50 = node.latency.p50()
  if (Number.isNaN(p50)) return undefined
  return p50 + ERROR_WEIGHT_MS * node.errorRate()
}

/**
 * The highest head any node of the list that takes calls has shown; undefined when none has. A node
 * that is out (failing, on another chain) does not set it: its head may be stale or not this chain's.
 */
export function highestHead(nodes: readonly UpstreamNode[]): number | undefined {
  let top: number | undefined
  for (const n of nodes) if (n.head !== undefined && (top === undefined || n.head > top) && n.healthy()) top = n.head
  return top
}

export interface ChoiceOptions {
  /** The call's method: nodes that said they lack it are passed over while another serves it. */
  method?: string
  /** The newest block the call names: nodes whose head is below it are passed over while another reaches it. */
  minBlock?: number
  /** The call may be a probe (a read: hedged to the best node, so the client does not wait for the probed one). */
  mayProbe: boolean
  /** A heavy call (method table `heavy`): nodes are scored by their heavy calls' latency. */
  heavy?: boolean
  /** The account the call is for: nodes with a free slot for it (see NodeCapacity) are preferred. */
  account?: CallFor
}

export interface Choice {
  node: UpstreamNode
  /** The best node: a probe is hedged to it, and a hedge of an ordinary call waits for its p95. */
  best: UpstreamNode
  /** Sent to a node outside the best ones to measure it: hedge it to `best`. */
  probe: boolean
}

/**
 * Chooses the node for a call among a kind's nodes: healthy and not tried yet by this call; of
 * those, the ones that reach the block the call names, are at the highest head any node has
 * shown and serve the method (in that order; each preference dropped only when no node meets it); of those, the
 * best by score share the calls in turn, and one call in PROBE_EVERY probes another. Nodes not
 * measured yet share the calls with the best until they are.
 */
export class NodeChooser {
  #turn = 0
  #probeTurn = 0
  #calls = 0
  /** Reused for each choice: no array allocated per call. */
  readonly #ranked: UpstreamNode[] = []

  choose(nodes: readonly UpstreamNode[], tried: ReadonlySet<UpstreamNode>, opts: ChoiceOptions): Choice | undefined {
    const top = highestHead(nodes)
    const heavy = opts.heavy === true
    const ranked = this.#ranked
    ranked.length = 0
    let bestRank = Number.POSITIVE_INFINITY
    for (const n of nodes) {
      if (tried.has(n) || !n.healthy()) continue
      const rank = rankOf(n, opts, top)
      if (rank < bestRank) {
        bestRank = rank
        ranked.length = 0
      }
      if (rank === bestRank) ranked.push(n)
    }
    if (ranked.length === 0) return undefined
    // A node whose set-aside time for the method has just passed gets this call, whatever its
    // score: the probe that learns whether it serves the method again (see MethodsLacking).
    if (opts.method !== undefined) for (const n of ranked) if (n.lacking.takeProbe(opts.method)) return { node: n, best: n, probe: false }
    if (ranked.length === 1) return { node: ranked[0], best: ranked[0], probe: false }
    // The best score among the measured; unmeasured nodes count as close to it until measured.
    let best: UpstreamNode | undefined
    let bestScore = Number.POSITIVE_INFINITY
    for (const n of ranked) {
      const s = scoreOf(n, heavy)
      if (s !== undefined && s < bestScore) {
        bestScore = s
        best = n
      }
    }
    if (best === undefined) {
      const node = ranked[this.#turn++ % ranked.length]
      return { node, best: node, probe: false }
    }
    const bound = bestScore * CLOSE_FACTOR + CLOSE_MS
    let close = 0
    let far = 0
    for (const n of ranked) {
      const s = scoreOf(n, heavy)
      if (s === undefined || s <= bound) close++
      else far++
    }
    this.#calls++
    if (opts.mayProbe && far > 0 && this.#calls % PROBE_EVERY === 0) {
      const k = this.#probeTurn++ % far
      return { node: nth(ranked, k, heavy, (s) => s !== undefined && s > bound), best, probe: true }
    }
    const node = nth(ranked, this.#turn++ % close, heavy, (s) => s === undefined || s <= bound)
    // A node not measured yet is a probe too: hedged to the best, measured by this call.
    return { node, best, probe: node !== best && scoreOf(node, heavy) === undefined && opts.mayProbe }
  }
}

/**
 * Lower is preferred: reaches the block (4), is at the highest head (2), serves the method (1), has a
 * free slot (0.5). Lag outranks a set-aside method: a node at the head that has the method set aside
 * is asked (it answers "not found" at once, and the call goes on) before a node behind the head,
 * so that no set-aside, right or wrong, sends calls to a node behind while one at the head serves them.
 */
function rankOf(n: UpstreamNode, opts: ChoiceOptions, top: number | undefined): number {
  let rank = 0
  if (n.capacity !== undefined && !n.hasRoom(opts.account)) rank += 0.5
  if (opts.method !== undefined && n.lacking.has(opts.method)) rank += 1
  if (opts.minBlock !== undefined && n.head !== undefined && n.head < opts.minBlock) rank += 4
  if (top !== undefined && n.head !== undefined && n.head < top) rank += 2
  return rank
}

/** The k-th node of the list whose score `keep` accepts. */
function nth(nodes: readonly UpstreamNode[], k: number, heavy: boolean, keep: (score: number | undefined) => boolean): UpstreamNode {
  let seen = 0
  for (const n of nodes) {
    if (!keep(scoreOf(n, heavy))) continue
    if (seen++ === k) return n
  }
  return nodes[0]
}
