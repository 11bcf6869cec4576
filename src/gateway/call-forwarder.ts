import type { LimitsConfig } from '../config/types.js'
import type { NodeKind } from '../core/node-kind.js'
import { GatewayError, errorResponseJson } from '../errors/registry.js'
import { Answer } from '../upstream/answer.js'
import { saysStatePruned } from '../upstream/state-pruned.js'
import type { Routed } from './batch-plan.js'
import type { CallPolicies } from './call-policies.js'
import { waitQueued, type DispatchContext } from './dispatch-context.js'
import type { ServerErrorContext } from './fault-log.js'
import type { FilterPin, FilterPins } from './filter-pins.js'
import type { HeavyCalls } from './heavy-calls.js'
import { newestBlockOf } from './router.js'
import type { UpstreamCaller } from './upstream-caller.js'
import { gatewayErrorFor } from './upstream-failure.js'

export interface CallForwarderDeps {
  /** The filter caps (maxFiltersPerKey, maxFiltersPerAccount); a reload replaces them. */
  limits: LimitsConfig
  filters: FilterPins
  /** Cache, in-flight sharing, getLogs splitting, heavy time-outs, then the pool. */
  calls: UpstreamCaller
  /** Each 5xx error the gateway answers a call with, with its cause (FaultLog.answered). */
  onServerError?: (e: GatewayError, at: ServerErrorContext) => void
  /** Each key's heavy calls at once (absent: no bound). */
  heavy?: HeavyCalls
  /** Each transport's charge: an archive retry is charged again (callPolicies). */
  policies: CallPolicies
}

/**
 * Sends one routed call where it goes, and makes whatever happens its answer: a node's answer
 * (never counted as the client's malformed message, whatever its code: see `forward`), the archive retry of a full node's pruned state,
 * a filter call on the node that holds the filter (FilterPins), a local call answered by the
 * transport, or the gateway error of a failure, reported with its cause.
 * @example
 * const answer = await forwarder.forward(ctx, routed) // never rejects
 */
export class CallForwarder {
  /** `deps` is the dispatcher's own object: a reload's limits (RpcDispatcher.setLimits) reach it. */
  constructor(private readonly deps: CallForwarderDeps) {}

  /**
   * Send one call upstream; gateway failures become this call's JSON-RPC error. A local call is
   * answered by the transport (ctx.local); a subscription it creates goes into `subscribed`.
   */
  async forward(ctx: DispatchContext, r: Routed, subscribed?: string[]): Promise<Answer> {
    const idJson = r.call.idJson ?? 'null'
    if (r.local) return this.#local(ctx, r, idJson, subscribed)
    // Filter calls keep their own books (FilterPins); an ordinary call pays this one check.
    if (r.spec.filter !== undefined) return this.#filterCall(ctx, r, idJson)
    try {
      let reply = await this.#call(ctx, r, r.kind, idJson, undefined)
      // Old state behind a block hash (or a head not known yet) reaches a full node that pruned it:
      // one more try on an archive node, when the key has archive access (without it the client
      // gets the full node's own answer). Only on a node's own pruned-state error (saysStatePruned),
      // never on a revert's words; charged as the archive call it is, or refused as one. A refused
      // retry keeps the full node's kind: usage counts that call, the charge counted the refusal.
      if (reply.isError && reply.kind === 'full' && ctx.access.archive && ctx.pool.hasKind('archive') && saysStatePruned(reply)) {
        const charged = this.deps.policies[ctx.transport].charge(ctx, { full: 0, archive: 1, fullUnits: 0, archiveUnits: r.spec.cost })
        if (charged.refusal !== undefined) return failed(charged.refusal, r)
        if (charged.delayMs > 0) await waitQueued(charged.delayMs)
        reply = await this.#call(ctx, r, 'archive', idJson, undefined)
      }
      // A node's -32700 or -32602 is its dialect, never proof that the client's message was
      // malformed (Ganache answers -32700 for "header not found"): the gateway parsed the message
      // before forwarding it, and only its own refusals count toward the WebSocket penalty.
      return reply
    } catch (err) {
      return failed(this.upstreamError(ctx, err, r.call.method), r)
    }
  }

  /**
   * The gateway error for an upstream failure (see gatewayErrorFor), reported with its cause.
   * @param method the call's method (an upstream batch: its methods, comma-separated)
   * @param calls calls of an upstream batch answered with it (undefined: one call)
   */
  upstreamError(ctx: DispatchContext, err: unknown, method: string, calls?: number): GatewayError {
    const e = gatewayErrorFor(err, ctx.network)
    // A 429 (heavy calls at once) is the client's limit, not a fault of the gateway or a node.
    if (e.http >= 500) this.deps.onServerError?.(e, { network: ctx.network, method, calls })
    return e
  }

  /**
   * A filter call, on the node FilterPins says: a new filter takes room in its key's and
   * account's shares (an idle one of theirs uninstalled for it, or it is refused), a call on a
   * filter goes to its node; what the node answers settles the pin.
   */
  async #filterCall(ctx: DispatchContext, r: Routed, idJson: string): Promise<Answer> {
    const filters = this.deps.filters
    const pinned = filters.pin(r.spec.filter!, ctx.network, r.call.params, ctx.key.record, this.deps.limits)
    // Uninstalling a filter that is not there is no error to geth, anvil or Ganache: each answers
    // `false` (viem's uninstallFilter throws on an error). A filter this key does not hold is one
    // no node will uninstall for it, so the answer is the node's `false`, without asking one.
    if (pinned instanceof GatewayError && pinned.code === 'FILTER_NOT_FOUND' && r.spec.filter === 'uninstall') return notUninstalled(r)
    if (pinned instanceof GatewayError) return failed(pinned, r)
    if (pinned.evicted !== undefined) this.#uninstall(ctx, pinned.evicted)
    let reply: Answer | undefined
    try {
      reply = await this.#call(ctx, r, r.kind, idJson, pinned.node)
      return reply
    } catch (err) {
      return failed(this.upstreamError(ctx, err, r.call.method), r)
    } finally {
      filters.settle(pinned, reply)
    }
  }

  /**
   * Uninstall a filter evicted to make room for its key's new one, on its node, without waiting:
   * one call per filter made (itself charged), so bounded by the key's rate. If it fails, the node
   * drops the filter after its own idle time-out.
   */
  #uninstall(ctx: DispatchContext, pin: FilterPin): void {
    const { network, pool, key } = ctx
    const call = { network, pool, kind: pin.kind, method: 'eth_uninstallFilter', params: [pin.filterId], idJson: '0', node: pin.node, account: key.account }
    this.deps.calls.call(call).catch(() => {
      // The node's own time-out removes it.
    })
  }

  async #local(ctx: DispatchContext, r: Routed, idJson: string, subscribed: string[] | undefined): Promise<Answer> {
    try {
      if (ctx.local === undefined) throw new Error(`no local handler for ${r.call.method}`)
      const out = await ctx.local.call(r.call, idJson, r.kind)
      if (out.subscribed !== undefined) subscribed?.push(out.subscribed)
      if (out.failure !== undefined && out.failure.http >= 500) this.deps.onServerError?.(out.failure, { network: ctx.network, method: r.call.method })
      const answer = Answer.ofText(out.body, out.isError, 'gateway', r.kind)
      answer.malformed = out.malformed
      return answer
    } catch (err) {
      const e = new GatewayError('INTERNAL_ERROR', undefined, { cause: err })
      this.deps.onServerError?.(e, { network: ctx.network, method: r.call.method })
      return Answer.gatewayError(errorResponseJson(idJson, e.rpc, e.message), e.http, r.kind)
    }
  }

  #call(ctx: DispatchContext, r: Routed, kind: NodeKind, idJson: string, node: string | undefined): Promise<Answer> {
    const { method, params } = r.call
    const minBlock = r.spec.block === undefined ? undefined : newestBlockOf(r.spec, params)
    // A verified call is run in the gateway's EVM (seconds of a worker thread for a loop): heavy as a trace is.
    const heavy = r.spec.heavy === true || runsEvm(ctx.pool.verify, method) ? this.deps.heavy?.slotFor(ctx.key) : undefined
    return this.deps.calls.call({
      network: ctx.network,
      pool: ctx.pool,
      kind,
      method,
      params,
      idJson,
      node,
      minBlock,
      heavy,
      account: ctx.key.account,
    })
  }
}

/** A gateway error as a call's answer, with the call's id, on the node kind it was routed to. */
export function failed(e: GatewayError, r: Routed): Answer {
  return Answer.gatewayError(errorResponseJson(r.call.idJson ?? 'null', e.rpc, e.message), e.http, r.kind)
}

/** Whether the gateway's EVM runs this method's calls (networks.<slug>.verify: calls). */
function runsEvm(verify: 'off' | 'reads' | 'calls', method: string): boolean {
  return verify === 'calls' && (method === 'eth_call' || method === 'eth_estimateGas')
}

/** eth_uninstallFilter's answer for a filter that is not there, as the nodes give it. */
function notUninstalled(r: Routed): Answer {
  return Answer.ofText(`{"jsonrpc":"2.0","id":${r.call.idJson ?? 'null'},"result":false}`, false, 'gateway', r.kind)
}
