import type { NodeKind } from '../core/node-kind.js'

/**
 * A call could not be carried to a node or its answer could not be read: connection refused or
 * reset, a non-2xx status without a JSON body, a socket closed with the call pending.
 *
 * `requestSent` says whether the node may have received the request. It is false only when we
 * know it did not (the connection was never made): the pool relies on it to decide whether a
 * call that is not safe to repeat (eth_sendRawTransaction) may go to another node.
 */
export class UpstreamTransportError extends Error {
  override name = 'UpstreamTransportError'
  readonly node: string
  readonly requestSent: boolean
  /**
   * What the node did, in words, without the node's name or anything it sent (`HTTP 500 with a
   * non-JSON body (52 bytes)`): what the client's error message says. The message adds the node's
   * name and the first bytes of what it sent, for the log.
   */
  readonly what: string
  constructor(what: string, opts: { node: string; requestSent: boolean; cause?: unknown; sample?: string }) {
    super(`${opts.node}: ${what}${opts.sample === undefined ? '' : `: ${opts.sample}`}`, { cause: opts.cause })
    this.node = opts.node
    this.requestSent = opts.requestSent
    this.what = what
  }
}

/**
 * The node did not answer within the call's time-out. The request may have been received. The
 * time-out covers the whole answer, so a node that sends one byte a second times out too.
 */
export class UpstreamTimeout extends UpstreamTransportError {
  override name = 'UpstreamTimeout'
  readonly timeoutMs: number
  /** @param received bytes of the answer that had come when the time ran out (0 or absent: none) */
  constructor(opts: { node: string; timeoutMs: number; received?: number; cause?: unknown }) {
    const what = opts.received
      ? `no complete answer within ${opts.timeoutMs} ms (${opts.received} bytes of it had come)`
      : `no answer within ${opts.timeoutMs} ms`
    super(what, { node: opts.node, requestSent: true, cause: opts.cause })
    this.timeoutMs = opts.timeoutMs
  }
}

/**
 * The node's answer is larger than the gateway holds for one call (limits.maxUpstreamBytes): it
 * is dropped as it comes, never buffered whole. Another node would send the same answer, so the
 * pool does not fail over: the client is told to ask for less.
 */
export class UpstreamAnswerTooLarge extends UpstreamTransportError {
  override name = 'UpstreamAnswerTooLarge'
  readonly limit: number
  /** @param size the answer's size when known (Content-Length, a WebSocket frame's length), else at least limit + 1 */
  constructor(opts: { node: string; limit: number; size?: number }) {
    super(`an answer of ${opts.size === undefined ? `more than ${opts.limit}` : opts.size} bytes, over the limit of ${opts.limit}`, {
      node: opts.node,
      requestSent: true,
    })
    this.limit = opts.limit
  }
}

/** Largest answer accepted from a node by default (limits.maxUpstreamBytes): geth's own client reads at most this much per WebSocket message. */
export const DEFAULT_MAX_UPSTREAM_BYTES = 32 * 1024 * 1024

/** No healthy node of the asked kind in the network's pool (the front end answers HTTP 503). */
export class NoHealthyUpstream extends Error {
  override name = 'NoHealthyUpstream'
  readonly network: string
  readonly kind: NodeKind
  /** Why: each node of the kind and why it is out (`a: behind, b: failures`), or `none configured`. */
  readonly why?: string
  constructor(opts: { network: string; kind: NodeKind; why?: string; cause?: unknown }) {
    super(`no healthy ${opts.kind} node for ${opts.network}${opts.why ? ` (${opts.why})` : ''}`, { cause: opts.cause })
    this.network = opts.network
    this.kind = opts.kind
    this.why = opts.why
  }
}

/**
 * Every node of the kind said, within the set-aside time (health.methodSetAsideMs), that it does not
 * serve this method: the client gets -32601 without a node being asked (see UpstreamPool).
 */
export class MethodServedByNoNode extends Error {
  override name = 'MethodServedByNoNode'
  readonly method: string
  readonly kind: NodeKind
  constructor(opts: { network: string; kind: NodeKind; method: string }) {
    super(`no ${opts.kind} node of ${opts.network} serves ${opts.method}`)
    this.method = opts.method
    this.kind = opts.kind
  }
}

/**
 * Consensus (networks.<slug>.consensus) reached no agreement: the nodes asked gave different
 * answers and no answer had `agreement` of them. Not a failure of a node (it is not counted
 * against any, nor tried elsewhere): the client is told the nodes disagree, never given a guess.
 */
export class NodesDisagree extends Error {
  override name = 'NodesDisagree'
  /** What was seen, in words, without node names: `3 nodes gave 3 different answers; 2 must agree`. */
  readonly what: string
  constructor(what: string) {
    super(what)
    this.what = what
  }
}

/**
 * Every slot of the node this call was for (`upstreams[].maxInFlight`, this instance's share) stayed
 * taken for longer than the call may wait (see NodeCapacity). Not the node's failure: it is not
 * counted against it, and the call is not sent elsewhere (every node of the kind was full when it
 * was chosen). The client gets 503 with Retry-After.
 */
export class NodeBusy extends Error {
  override name = 'NodeBusy'
  readonly node: string
  readonly waitedMs: number
  constructor(opts: { node: string; waitedMs: number; limit: number }) {
    super(`${opts.node}: all ${opts.limit} slots of this instance stayed taken for ${opts.waitedMs} ms`)
    this.node = opts.node
    this.waitedMs = opts.waitedMs
  }
}

/** A node's answer is not a JSON object we can read an id from (the pool turns it into a transport failure). */
export class MalformedResponse extends Error {
  override name = 'MalformedResponse'
  constructor(message: string, opts?: { cause?: unknown }) {
    super(message, opts)
  }
}

/** True for the failures that count against a node and allow failover to another one. */
export function isUpstreamFailure(err: unknown): err is UpstreamTransportError {
  return err instanceof UpstreamTransportError
}
