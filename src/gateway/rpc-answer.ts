import { errorResponseJson, type GatewayError } from '../errors/registry.js'
import type { Answer } from '../upstream/answer.js'

/**
 * What to answer a message: an HTTP status, the body and headers. The body is one call's Answer
 * (a node's answer kept as bytes is sent as those bytes), a batch's JSON text, or null: nothing
 * (notifications).
 */
export interface RpcAnswer {
  status: number
  readonly body: Answer | string | null
  headers?: Readonly<Record<string, string>>
  /**
   * The message refused whole by its charge (a rate limit, a node kind the plan lacks), as the
   * typed error: a transport that answers each call of the message with its own id (WebSocket)
   * reads its code and message here. `status`, `body` and `headers` say the same, rendered.
   */
  refusal?: GatewayError
  /**
   * Calls answered with a protocol error (-32700, -32600, -32601, -32602), by the gateway or by
   * the node: malformed or unsupported messages, which the WebSocket penalty counts.
   */
  invalid?: number
  /**
   * Subscriptions the message's local calls created (eth_subscribe over WebSocket): the session
   * lets their notifications through once this answer is sent, and not before (the client must
   * know the id before a notification names it).
   */
  subscribed?: string[]
}

/**
 * A message refused whole (CallCharge's refusal): the typed error, and the JSON-RPC error it
 * renders to with a null id, its HTTP status and its headers (Retry-After, RateLimit-*).
 * @example
 * refusedWhole(new GatewayError('RATE_LIMITED')).status // 429
 */
export function refusedWhole(e: GatewayError): RpcAnswer {
  return { status: e.http, body: errorResponseJson('null', e.rpc, e.message), headers: e.headers, refusal: e }
}
