import type { LimitsConfig } from '../config/types.js'
import { GatewayError, errorResponseJson } from '../errors/registry.js'
import { Answer } from '../upstream/answer.js'
import { saysStatePruned } from '../upstream/state-pruned.js'
import type { CallPolicies } from './call-policies.js'
import { waitQueued, type DispatchContext } from './dispatch-context.js'
import type { ServerErrorContext } from './fault-log.js'
import type { FilterPin, FilterPins } from './filter-pins.js'
import type { GatewayCall } from './gateway-call.js'
import { paramsJson } from '../rpc/params-json.js'
import type { UpstreamCaller } from './upstream-caller.js'
import { gatewayErrorFor } from './upstream-failure.js'

export interface CallForwarderDeps {
  /** The filter caps (maxFiltersPerKey, maxFiltersPerAccount) in force: read per filter call, so a reload's hold from the next. */
  limits: () => LimitsConfig
  filters: FilterPins
  /** Cache, in-flight sharing, getLogs splitting, heavy time-outs, then the pool. */
  caller: UpstreamCaller
  /** Each 5xx error the gateway answers a call with, with its cause (FaultLog.answered). */
  onServerError?: (e: GatewayError, at: ServerErrorContext) => void
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
  constructor(private readonly deps: CallForwarderDeps) {}

  /**
   * Send one call upstream; gateway failures become this call's JSON-RPC error. A local call is
   * answered by the transport (ctx.local); a subscription it creates goes into `subscribed`.
   */
  async forward(ctx: DispatchContext, c: GatewayCall, subscribed?: string[]): Promise<Answer> {
    if (c.local) return this.#local(ctx, c, subscribed)
    // Filter calls keep their own books (FilterPins); an ordinary call pays this one check.
    if (c.spec.filter !== undefined) return this.#filterCall(ctx, c)
    try {
      const out = this.settle(ctx, c, await this.deps.caller.call(c))
      // Awaited only when it is a retry: an answer awaited as it is costs every call a turn of the microtask queue.
      return out instanceof Promise ? await out : out
    } catch (err) {
      return failed(this.upstreamError(ctx, err, c.method), c)
    }
  }

  /**
   * What a node's answer to `c` comes to: old state behind a block hash (or a head not known yet)
   * reaches a full node that pruned it, and gets one more try on an archive node when the key has
   * archive access (without it the client gets the full node's own answer). Only on a node's own
   * pruned-state error (saysStatePruned), never on a revert's words; charged as the archive call it
   * is, or refused as one. A refused retry keeps the full node's kind: usage counts that call, the
   * charge counted the refusal. The one place a pruned answer is looked at, for calls sent alone
   * and for calls of an upstream batch; synchronous when there is nothing to retry (a batch's
   * answers pay no promise each).
   * @throws (rejects with) what the archive call throws
   */
  settle(ctx: DispatchContext, c: GatewayCall, reply: Answer): Answer | Promise<Answer> {
    // A node's -32700 or -32602 is its dialect, never proof that the client's message was
    // malformed (Ganache answers -32700 for "header not found"): the gateway parsed the message
    // before forwarding it, and only its own refusals count toward the WebSocket penalty.
    if (!reply.isError || reply.kind !== 'full' || !ctx.access.archive || !ctx.pool.hasKind('archive') || !saysStatePruned(reply)) return reply
    return this.#onArchive(ctx, c)
  }

  async #onArchive(ctx: DispatchContext, c: GatewayCall): Promise<Answer> {
    const charged = this.deps.policies[ctx.transport].charge(ctx, { full: 0, archive: 1, fullUnits: 0, archiveUnits: c.spec.cost })
    if (charged.refusal !== undefined) return failed(charged.refusal, c)
    if (charged.delayMs > 0) await waitQueued(charged.delayMs)
    return this.deps.caller.call({ ...c, kind: 'archive' })
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
  async #filterCall(ctx: DispatchContext, c: GatewayCall): Promise<Answer> {
    const filters = this.deps.filters
    const pinned = filters.pin(c.spec.filter!, ctx.network, c.params, ctx.key.record, this.deps.limits())
    // Uninstalling a filter that is not there is no error to geth, anvil or Ganache: each answers
    // `false` (viem's uninstallFilter throws on an error). A filter this key does not hold is one
    // no node will uninstall for it, so the answer is the node's `false`, without asking one.
    if (pinned instanceof GatewayError && pinned.code === 'FILTER_NOT_FOUND' && c.spec.filter === 'uninstall') return notUninstalled(c)
    if (pinned instanceof GatewayError) return failed(pinned, c)
    if (pinned.evicted !== undefined) this.#uninstall(c, pinned.evicted)
    let reply: Answer | undefined
    try {
      // Pinned to the node that holds the filter (or makes it): exactly that node, no failover.
      reply = await this.deps.caller.call(pinned.node === undefined ? c : { ...c, node: pinned.node })
      return reply
    } catch (err) {
      return failed(this.upstreamError(ctx, err, c.method), c)
    } finally {
      filters.settle(pinned, reply)
    }
  }

  /**
   * Uninstall a filter evicted to make room for its key's new one, on its node, without waiting:
   * one call per filter made (itself charged), so bounded by the key's rate. If it fails, the node
   * drops the filter after its own idle time-out.
   */
  #uninstall(c: GatewayCall, pin: FilterPin): void {
    const params = [pin.filterId]
    const uninstall: GatewayCall = {
      ...c,
      ...this.deps.caller.budgetOf('eth_uninstallFilter'),
      kind: pin.kind,
      method: 'eth_uninstallFilter',
      params,
      paramsJson: paramsJson(params),
      idJson: '0',
      node: pin.node,
      heavySlot: undefined,
    }
    this.deps.caller.call(uninstall).catch(() => {
      // The node's own time-out removes it.
    })
  }

  async #local(ctx: DispatchContext, c: GatewayCall, subscribed: string[] | undefined): Promise<Answer> {
    try {
      if (ctx.local === undefined) throw new Error(`no local handler for ${c.method}`)
      const out = await ctx.local.call(c, c.idJson, c.kind)
      if (out.subscribed !== undefined) subscribed?.push(out.subscribed)
      if (out.failure !== undefined && out.failure.http >= 500) this.deps.onServerError?.(out.failure, { network: ctx.network, method: c.method })
      const answer = Answer.ofText(out.body, out.isError, 'gateway', c.kind)
      answer.invalid = out.invalid
      return answer
    } catch (err) {
      const e = new GatewayError('INTERNAL_ERROR', undefined, { cause: err })
      this.deps.onServerError?.(e, { network: ctx.network, method: c.method })
      return Answer.gatewayError(errorResponseJson(c.idJson, e.rpc, e.message), e.http, c.kind)
    }
  }
}

/** A gateway error as a call's answer, with the call's id, on the node kind it was routed to. */
export function failed(e: GatewayError, c: GatewayCall): Answer {
  return Answer.gatewayError(errorResponseJson(c.idJson, e.rpc, e.message), e.http, c.kind)
}

/** eth_uninstallFilter's answer for a filter that is not there, as the nodes give it. */
function notUninstalled(c: GatewayCall): Answer {
  return Answer.ofText(`{"jsonrpc":"2.0","id":${c.idJson},"result":false}`, false, 'gateway', c.kind)
}
