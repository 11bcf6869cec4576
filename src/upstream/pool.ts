import { systemClock, type Clock } from '../../actors/runtime/clock.js'
import type { NodeKind } from '../events/types.js'
import { isUpstreamFailure, NoHealthyUpstream, UpstreamAnswerTooLarge, UpstreamTimeout, type UpstreamTransportError } from './errors.js'
import type { Answer } from './answer.js'
import type { UpstreamNode } from './node.js'

export interface PoolCallOptions {
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
   * Hedging (reads only): when the node asked has not answered after this many ms (given its
   * own latency; undefined: do not hedge on it), ask another healthy node of the kind too, and
   * take the first answer. The slower call is left to finish; its answer is dropped.
   */
  hedgeAfterMs?: (node: UpstreamNode) => number | undefined
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
 * The nodes of one network, by kind: round-robin over the healthy nodes of the asked kind, and
 * failover to another one of the same kind on a transport failure or time-out. Not on an answer
 * over the size limit: another node would send the same answer (the client must ask for less).
 * @example
 * const reply = await pool.call('full', 'eth_blockNumber', [], '1', { timeoutMs: 5000 })
 * reply.text // '{"jsonrpc":"2.0","id":1,"result":"0x10"}'
 */
export class UpstreamPool {
  readonly network: string
  readonly #byKind: Record<NodeKind, UpstreamNode[]> = { full: [], archive: [] }
  readonly #next: Record<NodeKind, number> = { full: 0, archive: 0 }
  readonly #clock: Clock
  readonly hedges: HedgeCounters = { started: 0, won: 0 }

  constructor(network: string, nodes: UpstreamNode[], opts: { clock?: Clock } = {}) {
    this.network = network
    for (const node of nodes) this.#byKind[node.kind].push(node)
    this.#clock = opts.clock ?? systemClock
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
    const deadline = this.#clock.now() + (opts.deadlineMs ?? 2 * opts.timeoutMs)
    const tried = new Set<UpstreamNode>()
    if (opts.avoid) for (const n of this.nodes()) if (opts.avoid.has(n.name)) tried.add(n)
    let lastFailure: UpstreamTransportError | undefined
    for (;;) {
      const node = opts.node === undefined ? this.#pick(kind, tried) : this.#named(opts.node, tried)
      if (node === undefined) {
        throw lastFailure ?? new NoHealthyUpstream({ network: this.network, kind, why: this.#whyNone(kind) })
      }
      const left = deadline - this.#clock.now()
      if (left <= 0) {
        throw lastFailure ?? new UpstreamTimeout({ node: node.name, timeoutMs: 0 })
      }
      tried.add(node)
      try {
        const timeoutMs = Math.min(opts.timeoutMs, left)
        const hedgeMs = opts.hedgeAfterMs?.(node)
        const reply =
          hedgeMs === undefined || opts.node !== undefined
            ? await node.call(method, params, timeoutMs)
            : await this.#hedged(kind, node, method, params, timeoutMs, hedgeMs, tried)
        return reply.withId(clientIdJson)
      } catch (err) {
        if (!isUpstreamFailure(err) || err instanceof UpstreamAnswerTooLarge) throw err
        if (NOT_SAFE_TO_REPEAT.has(method) && err.requestSent) throw err
        lastFailure = err
      }
    }
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
    const index = calls.some((c) => NOT_SAFE_TO_REPEAT.has(c.method)) ? calls.flatMap((c, i) => (NOT_SAFE_TO_REPEAT.has(c.method) ? [] : [i])) : undefined
    const sent = index === undefined ? calls : index.map((i) => calls[i])
    if (sent.length === 0) return out
    const deadline = this.#clock.now() + (opts.deadlineMs ?? 2 * opts.timeoutMs)
    const tried = new Set<UpstreamNode>()
    let lastFailure: UpstreamTransportError | undefined
    for (;;) {
      const node = this.#pick(kind, tried)
      if (node === undefined) throw lastFailure ?? new NoHealthyUpstream({ network: this.network, kind, why: this.#whyNone(kind) })
      const left = deadline - this.#clock.now()
      if (left <= 0) throw lastFailure ?? new UpstreamTimeout({ node: node.name, timeoutMs: 0 })
      tried.add(node)
      try {
        const replies = await node.callBatch(sent, Math.min(opts.timeoutMs, left))
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
   * One attempt on `first`, and after `hedgeMs` without an answer one more on another healthy
   * node of the kind: the first answer wins. Rejects with the last failure when both fail.
   */
  #hedged(kind: NodeKind, first: UpstreamNode, method: string, params: unknown, timeoutMs: number, hedgeMs: number, tried: Set<UpstreamNode>): Promise<Answer> {
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
        const second = this.#pick(kind, tried)
        if (second === undefined) return
        tried.add(second)
        running++
        this.hedges.started++
        second.call(method, params, timeoutMs - hedgeMs).then(win(second), lose)
      }, hedgeMs)
      first.call(method, params, timeoutMs).then(win(first), lose)
    })
  }

  /** Each node of the kind and why it takes no call, for the 503 message. */
  #whyNone(kind: NodeKind): string {
    const nodes = this.#byKind[kind]
    if (nodes.length === 0) return 'none configured'
    const reasons: Record<string, string> = { failures: 'failing', 'error-rate': 'failing too often', behind: 'behind the other nodes' }
    return nodes.map((n) => `${n.name}: ${reasons[n.outReason() ?? ''] ?? 'being probed'}`).join(', ')
  }

  /** Nodes of this kind that take calls now. */
  hasHealthy(kind: NodeKind): boolean {
    return this.#byKind[kind].some((node) => node.healthy())
  }

  #named(name: string, tried: ReadonlySet<UpstreamNode>): UpstreamNode | undefined {
    const node = this.nodes().find((n) => n.name === name)
    return node === undefined || tried.has(node) ? undefined : node
  }

  /** The next healthy node of `kind` in round-robin order that this call has not tried yet. */
  #pick(kind: NodeKind, tried: ReadonlySet<UpstreamNode>): UpstreamNode | undefined {
    const nodes = this.#byKind[kind]
    const n = nodes.length
    for (let i = 0; i < n; i++) {
      const index = (this.#next[kind] + i) % n
      const node = nodes[index]
      if (!tried.has(node) && node.healthy()) {
        this.#next[kind] = (index + 1) % n
        return node
      }
    }
    return undefined
  }

  async close(): Promise<void> {
    await Promise.all(this.nodes().map((node) => node.close()))
  }
}
