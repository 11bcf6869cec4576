import type { KeyRestrictions } from '../keys/key-restrictions.js'
import type { NodeKind } from '../core/node-kind.js'
import type { GatewayError } from '../errors/registry.js'
import type { Access } from '../plans/entitlements.js'
import type { MethodRule, Transport } from '../rpc/method-policy.js'
import type { RpcCall } from '../rpc/parse.js'
import type { UpstreamPool } from '../upstream/pool.js'
import type { UsageMeter } from '../usage/usage-meter.js'
import type { KeyContext } from './key-directory.js'

/** What a transport hands the dispatcher with each message: who sent it, where to, and its own rules. */
export interface DispatchContext {
  readonly key: KeyContext
  /** What the key may use on this network (KeyDirectory.accessOn). */
  readonly access: Access
  readonly network: string
  readonly pool: UpstreamPool
  readonly bytesIn: number
  /**
   * The client's IP address (for IP throttling), asked only when a rate limit rejects: over HTTP
   * decoding it costs an allocation per request (a function, not a getter: the context keeps one
   * shape, which the request path's property accesses depend on).
   */
  readonly ip: () => string
  /** The transport the calls came over: its CallPolicy, the dispatcher's (src/gateway/call-policies.ts), says what differs. */
  readonly transport: Transport
  /** The method and contract lists of the signed token the request came with: each call must pass them as well as the key's. */
  readonly token?: KeyRestrictions | undefined
  /** Answers the calls the policy marks `local` (eth_subscribe and eth_unsubscribe over WebSocket). */
  readonly local?: LocalCalls
}

/**
 * How a transport's calls are handled: one per transport, made with the method rules and the charge
 * (src/gateway/call-policies.ts) and given to the dispatcher, which looks it up by
 * DispatchContext.transport and never asks more of which transport it serves.
 */
export interface CallPolicy {
  /**
   * Which methods it serves on a network (the table's, and what the network's forwardMethods
   * allows), and the refusal of the others (src/rpc/method-policy.ts).
   */
  methodRule(method: string, network: string): MethodRule
  /**
   * What the routed calls cost the key's rate, by node kind (src/gateway/call-charge.ts): over
   * HTTP each call is charged to the key's requests per second; over WebSocket the session
   * charged the whole message before dispatching it.
   */
  readonly charge: CallCharge
}

/** Calls of a message and their compute units, by the node kind they go to: what a charge takes. */
export interface CallsByKind {
  full: number
  archive: number
  fullUnits: number
  archiveUnits: number
}

/** Charges a message's calls and their compute units to its key: how long to queue them, or the refusal. */
export type CallCharge = (ctx: DispatchContext, calls: Readonly<CallsByKind>) => Charged

/**
 * A charge's outcome: the wait before the calls go, or the typed refusal (RATE_LIMITED with its
 * Retry-After and RateLimit-* headers, NODE_KIND_NOT_ALLOWED), which each transport renders its
 * own way: no transport reads back JSON the gateway wrote.
 */
export type Charged = { readonly delayMs: number; readonly refusal?: undefined } | { readonly refusal: GatewayError; readonly delayMs?: undefined }

/** The wait an admitted charge asks (`delayMs`: its calls queued for their tokens, at most limits.queueMs) before its calls go. */
export const waitQueued = (delayMs: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, delayMs))

/** What a local call answers: the response text with the client's id in it. */
export interface LocalAnswer {
  body: string
  isError: boolean
  /** A malformed or unsupported call (counts towards the WebSocket penalty). */
  invalid: boolean
  /** The gateway error the body carries, when it is one (a 5xx is logged with its cause). */
  failure?: GatewayError
  /** The subscription id an eth_subscribe created (RpcAnswer.subscribed). */
  subscribed?: string
}

/** Calls the gateway answers itself rather than a node: one per WebSocket session, not per message. */
export interface LocalCalls {
  call(call: RpcCall, idJson: string, kind: NodeKind): Promise<LocalAnswer>
}

/** Where the call path counts calls: the UsageMeter (a no-op when a benchmark turns metering off). */
export type UsageSink = Pick<UsageMeter, 'served' | 'rateLimited' | 'keyRuleRefused'>
