import type { MethodRules, Transport } from '../rpc/method-policy.js'
import { chargePerCall, chargeUnitsOnly, type PerCallChargeDeps } from './call-charge.js'
import type { CallPolicy } from './dispatch-context.js'

/** How the calls of each transport are handled (DispatchContext.transport picks one). */
export type CallPolicies = Readonly<Record<Transport, CallPolicy>>

/**
 * The call policy of each transport, made once where the method rules and the charge are made (the
 * composition root) and handed to the dispatcher, so that a transport only says which it is:
 * - over HTTP, the HTTP method rules, each call charged to the key's requests per second
 *   (chargePerCall);
 * - over WebSocket, the WebSocket method rules (subscriptions), the message's calls charged as a
 *   message by the session before it is dispatched and only their compute units here
 *   (chargeUnitsOnly).
 * `charging.queueMs` is read per call: a reload's applies to the next calls.
 * @example
 * const dispatcher = new RpcDispatcher({ ..., policies: callPolicies(methodRules, { usage, queueMs: () => 250 }) })
 */
export function callPolicies(methodRules: MethodRules, charging: PerCallChargeDeps): CallPolicies {
  return {
    http: { methodRule: (method, network) => methodRules.rule(method, 'http', network), charge: chargePerCall(charging) },
    ws: { methodRule: (method, network) => methodRules.rule(method, 'ws', network), charge: chargeUnitsOnly(charging) },
  }
}
