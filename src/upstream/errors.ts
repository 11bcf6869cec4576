import type { NodeKind } from '../events/types.js'

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
  constructor(message: string, opts: { node: string; requestSent: boolean; cause?: unknown }) {
    super(`${opts.node}: ${message}`, { cause: opts.cause })
    this.node = opts.node
    this.requestSent = opts.requestSent
  }
}

/** The node did not answer within the call's time-out. The request may have been received. */
export class UpstreamTimeout extends UpstreamTransportError {
  override name = 'UpstreamTimeout'
  readonly timeoutMs: number
  constructor(opts: { node: string; timeoutMs: number; cause?: unknown }) {
    super(`no answer within ${opts.timeoutMs} ms`, { node: opts.node, requestSent: true, cause: opts.cause })
    this.timeoutMs = opts.timeoutMs
  }
}

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
