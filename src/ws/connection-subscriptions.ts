import type { WsConfig } from '../config/types.js'
import type { NodeKind } from '../core/node-kind.js'
import { MESSAGES, refusal } from '../errors/messages.js'
import { ERRORS, errorResponseJson } from '../errors/registry.js'
import type { KeyContext } from '../gateway/key-directory.js'
import type { LocalAnswer, LocalCalls } from '../gateway/dispatch-context.js'
import { gatewayErrorFor } from '../gateway/upstream-failure.js'
import { METHODS } from '../rpc/method-table.js'
import type { RpcCall } from '../rpc/parse.js'
import { spliceId } from '../upstream/json-rpc-wire.js'
import { logsFilterRefusal } from './logs-filter-refusal.js'
import type { SubscriptionHub, SubscriptionSink } from './subscription-hub.js'
import { parseSubscribe } from './subscription-request.js'

export interface ConnectionSubscriptionsDeps {
  hub: SubscriptionHub
  network: string
  /** Read at each eth_subscribe: ws.maxSubscriptionsPerConnection. */
  config: WsConfig
  /** Where a notification goes once the client has been sent its subscription id. */
  deliver(text: string, kind: NodeKind): void
}

/** Notifications held for a subscription whose id the client has not been sent yet. */
const MAX_HELD = 16

interface ClientSub {
  /** The answer carrying this id was sent: notifications may flow. */
  ready: boolean
  held: string[]
  /** The node kind the held notifications came from (what they are charged as). */
  heldKind: NodeKind
}

/**
 * One connection's subscriptions, made on the network's SubscriptionHub: the gateway answers
 * eth_subscribe and eth_unsubscribe itself (the dispatcher hands them back as local calls), and
 * the hub sends each subscription's notifications here. A notification that comes before the
 * client knows its subscription id is held until the answer carrying that id is sent (`arm`).
 * @example
 * const subs = new ConnectionSubscriptions(key, { hub, network, config, deliver })
 * ctx.local = subs // eth_subscribe and eth_unsubscribe
 * subs.arm(answer.subscribed) // the id went out: held notifications follow
 */
export class ConnectionSubscriptions implements LocalCalls, SubscriptionSink {
  readonly #key: KeyContext
  readonly #deps: ConnectionSubscriptionsDeps
  readonly #subs = new Map<string, ClientSub>()
  /** eth_subscribe calls waiting for the node: they count towards the per-connection limit too. */
  #subscribing = 0
  #closed = false

  constructor(key: KeyContext, deps: ConnectionSubscriptionsDeps) {
    this.#key = key
    this.#deps = deps
  }

  /** The key whose subscriptions these are (the hub counts distinct logs filters per key). */
  get owner(): string {
    return this.#key.record.keyId
  }

  /** The key's account (its keys' distinct logs filters are counted together too). */
  get account(): string {
    return this.#key.record.accountId
  }

  get size(): number {
    return this.#subs.size
  }

  /** eth_subscribe or eth_unsubscribe, which the dispatcher hands back (the subscription ids come back in its answer). */
  call(call: RpcCall, idJson: string): Promise<LocalAnswer> {
    return METHODS[call.method]?.local === 'subscribe' ? this.subscribe(call, idJson) : Promise.resolve(this.unsubscribe(call, idJson))
  }

  /** eth_subscribe: join or open the shared subscription; the answer carries the client's own id. */
  async subscribe(call: RpcCall, idJson: string): Promise<LocalAnswer> {
    const { hub, network, config } = this.#deps
    const max = config.maxSubscriptionsPerConnection
    // Subscriptions still being made count: a client sending 1,000 eth_subscribe at once must
    // not get them all because none had been answered when the next was checked.
    const held = this.#subs.size + this.#subscribing
    if (held >= max) {
      const message = MESSAGES.WS_SUBSCRIPTIONS_FULL.text({ held, max })
      return { body: errorResponseJson(idJson, ERRORS.WS_TOO_MANY_SUBSCRIPTIONS.rpc, message), isError: true, invalid: false }
    }
    const check = parseSubscribe(call.params)
    if (!check.ok) return { body: errorResponseJson(idJson, ERRORS.INVALID_PARAMS.rpc, check.message), isError: true, invalid: true }
    this.#subscribing++
    let result: Awaited<ReturnType<SubscriptionHub['subscribe']>>
    try {
      result = await hub.subscribe(check.request, this)
    } finally {
      this.#subscribing--
    }
    if (result.ok) {
      if (this.#closed) {
        // The client left while the node answered: nobody will unsubscribe it otherwise.
        hub.unsubscribe(result.id, this)
      } else {
        this.#subs.set(result.id, { ready: false, held: [], heldKind: 'full' })
        return { body: `{"jsonrpc":"2.0","id":${idJson},"result":"${result.id}"}`, isError: false, invalid: false, subscribed: result.id }
      }
      return { body: `{"jsonrpc":"2.0","id":${idJson},"result":"${result.id}"}`, isError: false, invalid: false }
    }
    // The node's refusal is its own: the gateway parsed the request (parseSubscribe) before sending it.
    if ('nodeAnswer' in result) return { body: spliceId(result.nodeAnswer, idJson), isError: true, invalid: false }
    if (result.failure === 'no-ws-upstream') {
      // No `failure`: not a fault of the gateway or a node, but the configuration (start warns of it).
      const message = MESSAGES.NO_WS_NODE_CONFIGURED.text({ network })
      return { body: errorResponseJson(idJson, ERRORS.NO_WS_UPSTREAM.rpc, message), isError: true, invalid: false }
    }
    if (result.failure === 'logs-filters') {
      const message = logsFilterRefusal(network, result.limit, result.held, result.max)
      return { body: errorResponseJson(idJson, ERRORS.WS_TOO_MANY_LOGS_FILTERS.rpc, message), isError: true, invalid: false }
    }
    const e = result.failure === 'no-node' ? refusal('NO_WS_NODE_REACHABLE', { network }) : gatewayErrorFor(result.cause, network)
    return { body: errorResponseJson(idJson, e.rpc, e.message), isError: true, invalid: false, failure: e }
  }

  /** eth_unsubscribe: true when this connection had that subscription, false otherwise (as nodes answer). */
  unsubscribe(call: RpcCall, idJson: string): LocalAnswer {
    const params = call.params
    const id = Array.isArray(params) && params.length === 1 ? params[0] : undefined
    if (typeof id !== 'string') {
      return {
        body: errorResponseJson(idJson, ERRORS.INVALID_PARAMS.rpc, MESSAGES.UNSUBSCRIBE_PARAMS.text({})),
        isError: true,
        invalid: true,
      }
    }
    const had = this.#subs.delete(id) && this.#deps.hub.unsubscribe(id, this)
    return { body: `{"jsonrpc":"2.0","id":${idJson},"result":${had}}`, isError: false, invalid: false }
  }

  /** A notification for client subscription `id` (called by the hub, `text` carries `id`). */
  notify(id: string, text: string, kind: NodeKind): void {
    const sub = this.#subs.get(id)
    if (sub === undefined || this.#closed) return
    if (!sub.ready) {
      if (sub.held.length < MAX_HELD) {
        sub.held.push(text)
        sub.heldKind = kind
      }
      return
    }
    this.#deps.deliver(text, kind)
  }

  /** The client was sent subscription id `id`: the notifications held for it follow. */
  arm(id: string): void {
    const sub = this.#subs.get(id)
    if (sub === undefined || sub.ready) return
    sub.ready = true
    const held = sub.held
    sub.held = []
    for (const text of held) this.#deps.deliver(text, sub.heldKind)
  }

  /** The connection is gone: every subscription ends at the hub. */
  close(): void {
    this.#closed = true
    for (const id of this.#subs.keys()) this.#deps.hub.unsubscribe(id, this)
    this.#subs.clear()
  }
}
