import type { LimitsConfig } from '../config/types.js'
import { refusal } from '../errors/messages.js'
import { ERRORS, errorResponseJson } from '../errors/registry.js'
import { paramsJson, rememberParamsJson } from '../rpc/params-json.js'
import { isInvalid, type ParsedBody, type RpcCall, type RpcEntry } from '../rpc/parse.js'
import type { Answer } from '../upstream/answer.js'
import { planBatch, type Refused } from './batch-plan.js'
import { CallForwarder, type CallForwarderDeps } from './call-forwarder.js'
import { CallPipeline, type CallPipelineDeps } from './call-pipeline.js'
import type { DispatchContext } from './dispatch-context.js'
import type { GatewayCall } from './gateway-call.js'
import type { HeadTracker } from './head-tracker.js'
import { HEAVY_RETRY_AFTER_S, type HeavyCalls } from './heavy-calls.js'
import { refuseByKeyRules } from './key-rules.js'
import { blocksNamed, routeNamed, type RouteContext } from './router.js'
import { refusedWhole, type RpcAnswer } from './rpc-answer.js'
import { verifiedLogsAdmission } from '../verified-reads/log-range-admission.js'
import { isVerifiedRead } from '../verified-reads/verified-reads.js'

export interface RpcDispatcherDeps extends CallForwarderDeps, CallPipelineDeps {
  /** maxBatch here, batchConcurrency in the pipeline, the filter caps in the forwarder: the limits in force (a reload's from its next request). */
  limits: () => LimitsConfig
  heads: HeadTracker
  /** Blocks of state full nodes keep; older state is routed to archive nodes. */
  windowBlocks: number
  /** Tell the client how a single call was served (diagnostics.responseHeaders; see diagnosticHeaders). */
  diagnosticHeaders?: boolean
  /** Each key's heavy calls at once (absent: no bound). */
  heavy?: HeavyCalls
}

/**
 * JSON-RPC codes of the gateway's own refusals that say the client's message was malformed or
 * unsupported: the WebSocket penalty counts those (a node's answer never counts, see CallForwarder).
 */
const PROTOCOL_ERROR_CODES: ReadonlySet<number> = new Set([-32700, -32600, -32601, -32602])

/** The Retry-After of a single call refused for its key's heavy calls at once (the only 429 a call's own answer carries). */
const HEAVY_RETRY: Readonly<Record<string, string>> = Object.freeze({ 'Retry-After': String(HEAVY_RETRY_AFTER_S) })

/**
 * Handles the JSON-RPC calls of one authenticated request, whatever the transport: method policy
 * and routing, where each call becomes the GatewayCall it stays on its way to the node; then the
 * CallPipeline (charge, wait, forward, meter), the same steps for a single call (`one`) and a
 * batch (`run`: each call routed, copies merged; one bad call is one error entry). What differs is the
 * framing: a single call's status and headers are its answer's, a batch's answers are joined.
 */
export class RpcDispatcher {
  readonly #pipeline: CallPipeline

  constructor(private readonly deps: RpcDispatcherDeps) {
    this.#pipeline = new CallPipeline(deps, new CallForwarder(deps))
  }

  /**
   * The calls a parsed message costs the key's rate: each call of a batch it will handle, and one
   * for anything refused whole (bad JSON, an empty batch, a batch over `limits.maxBatch`): refused
   * work is free, or a refused batch of 10,000 would throttle the key for seconds.
   */
  costOf(parsed: ParsedBody): number {
    return parsed.kind === 'batch' && parsed.entries.length <= this.deps.limits().maxBatch ? parsed.entries.length : 1
  }

  // Not async: it hands on #single's or #batch's promise (one promise fewer per request).
  dispatch(ctx: DispatchContext, parsed: ParsedBody): Promise<RpcAnswer> {
    switch (parsed.kind) {
      case 'parse-error':
        return Promise.resolve({ status: ERRORS.PARSE_ERROR.http, body: errorResponseJson('null', ERRORS.PARSE_ERROR.rpc, parsed.message), invalid: 1 })
      case 'empty-batch':
        return Promise.resolve({
          status: ERRORS.EMPTY_BATCH.http,
          body: errorResponseJson('null', ERRORS.EMPTY_BATCH.rpc, ERRORS.EMPTY_BATCH.message),
          invalid: 1,
        })
      case 'single':
        return this.#single(ctx, parsed.entry)
      case 'batch':
        return this.#batch(ctx, parsed.entries)
    }
  }

  async #single(ctx: DispatchContext, entry: RpcEntry): Promise<RpcAnswer> {
    if (isInvalid(entry)) return { status: 200, body: errorResponseJson(entry.idJson, entry.rpc, entry.message), invalid: 1 }
    const routed = this.#route(ctx, entry, this.#routeContext(ctx), 0)
    if ('refused' in routed) {
      const invalid = routed.invalid ? 1 : 0
      if (entry.idJson === undefined) return { status: 204, body: null, invalid }
      return { status: routed.status, body: routed.body, invalid }
    }
    const served = await this.#pipeline.one(ctx, routed)
    if (served.refusal) return refusedWhole(served.refusal)
    const out = served.answer!
    const invalid = served.invalid
    // An eth_subscribe that made a subscription: the WebSocket session takes its id from here.
    const made = served.subscribed
    if (entry.idJson === undefined) return { status: 204, body: null, invalid, subscribed: made }
    let headers = this.deps.diagnosticHeaders === true ? diagnosticHeaders(out) : out.cache === undefined ? undefined : { 'X-Tollgate-Cache': out.cache }
    // No node could take the call now (none healthy, or all at capacity): a second is the usual wait.
    if (out.status === 503) headers = { ...headers, 'Retry-After': '1' }
    // Its key's heavy calls at once were all running (HEAVY_CALLS_BUSY).
    else if (out.status === 429) headers = { ...headers, ...HEAVY_RETRY }
    return { status: out.status, body: out, headers, invalid, subscribed: made }
  }

  async #batch(ctx: DispatchContext, entries: RpcEntry[]): Promise<RpcAnswer> {
    const { maxBatch } = this.deps.limits()
    if (entries.length > maxBatch) {
      const e = refusal('BATCH_OVER_LIMIT', { calls: entries.length, max: maxBatch })
      return { status: e.http, body: errorResponseJson('null', e.rpc, e.message), invalid: 1 }
    }
    // What routing reads of the key, the nodes and the head: once for the batch, not per call.
    const routeContext = this.#routeContext(ctx)
    const plan = planBatch(entries, (call, i) => this.#route(ctx, call, routeContext, i))
    const served = await this.#pipeline.run(ctx, plan)
    if (served.refusal) return refusedWhole(served.refusal)
    const answered = plan.parts.filter((p): p is string => p !== undefined)
    // A batch of notifications only is answered with nothing (JSON-RPC 2.0, section 6).
    if (answered.length === 0) return { status: 204, body: null, invalid: served.invalid, subscribed: served.subscribed }
    return { status: 200, body: `[${answered.join(',')}]`, invalid: served.invalid, subscribed: served.subscribed }
  }

  /** What routing needs to know of the key, the network's nodes and its head, now. */
  #routeContext(ctx: DispatchContext): RouteContext {
    return {
      access: ctx.access,
      healthy: { full: ctx.pool.hasHealthy('full'), archive: ctx.pool.hasHealthy('archive') },
      hasArchive: ctx.pool.hasKind('archive'),
      head: this.deps.heads.head(ctx.network),
      windowBlocks: this.deps.windowBlocks,
      planName: ctx.key.plan?.name ?? 'current',
    }
  }

  /** The call as the gateway serves it (GatewayCall: its node kind, units, block, heavy slot, budget), or the answer that refuses it. */
  #route(ctx: DispatchContext, call: RpcCall, routeContext: RouteContext, index: number): GatewayCall | Refused {
    const idJson = call.idJson ?? 'null'
    const denied = refuseByKeyRules(ctx.key, ctx.network, call, this.deps.usage, ctx.token)
    if (denied !== undefined) return denied
    const rule = this.deps.policies[ctx.transport].methodRule(call.method, ctx.network)
    if (!rule.ok) return { refused: true, status: 200, body: errorResponseJson(idJson, ERRORS.METHOD_NOT_FOUND.rpc, rule.message), invalid: true }
    // Its blocks read once: for the route (the oldest) and for the node that answers (the newest).
    const blocks = blocksNamed(rule.spec, call.params)
    const r = routeNamed(call.method, rule.spec, blocks, routeContext)
    if ('refuse' in r) {
      const spec = ERRORS[r.refuse]
      return { refused: true, status: spec.http, body: errorResponseJson(idJson, spec.rpc, r.message), invalid: PROTOCOL_ERROR_CODES.has(spec.rpc) }
    }
    const spec = rule.spec
    // A split eth_getLogs costs its method's units per chunk (each a node call); any other call its method's units.
    let units = spec.path === 'logs' ? spec.cost * this.deps.caller.logs.chunksFor(call.params, routeContext.head) : spec.cost
    if (spec.path === 'logs' && isVerifiedRead(call.method, ctx.pool.verify) && Array.isArray(call.params) && call.params.length === 1) {
      // A verified one also its header calls, and is bounded over the whole call before any node is asked.
      const header = this.deps.policies[ctx.transport].methodRule('eth_getBlockByNumber', ctx.network)
      const admitted = verifiedLogsAdmission(call.params[0], routeContext.head, { logsUnits: units, headerUnits: header.ok ? header.spec.cost : 0 })
      if ('refuse' in admitted) {
        this.deps.caller.verifiedReads(ctx.pool).refused(call.method)
        const err = admitted.refuse
        return { refused: true, status: err.http, body: errorResponseJson(idJson, err.rpc, err.message), invalid: false }
      }
      units = admitted.units
    }
    const { method, params } = call
    const budget = this.deps.caller.budgetOf(method)
    // The same object literal for every call: one shape on the request path.
    return {
      network: ctx.network,
      pool: ctx.pool,
      kind: r.kind,
      method,
      params,
      paramsJson: call.paramsJson === undefined ? paramsJson(params) : rememberParamsJson(params, call.paramsJson),
      idJson,
      answered: call.idJson !== undefined,
      spec,
      units,
      local: rule.local === true,
      index,
      account: ctx.key.account,
      minBlock: blocks[1],
      // A verified call is run in the gateway's EVM (seconds of a worker thread for a loop): heavy as a trace is.
      heavySlot: spec.heavy === true || runsEvm(ctx.pool.verify, method) ? this.deps.heavy?.slotFor(ctx.key) : undefined,
      node: undefined,
      timeoutMs: budget.timeoutMs,
      deadlineMs: budget.deadlineMs,
      heavy: budget.heavy,
      read: budget.read,
      hedge: budget.hedge,
    }
  }
}

/** Whether the gateway's EVM runs this method's calls (networks.<slug>.verify: calls). */
function runsEvm(verify: 'off' | 'reads' | 'calls', method: string): boolean {
  return verify === 'calls' && (method === 'eth_call' || method === 'eth_estimateGas')
}

/**
 * How a call was served, as response headers (diagnostics.responseHeaders, off by default: node
 * names are the operator's): the node that answered (`cache`, `gateway`), the nodes asked, the
 * consensus reached, and the cache's hit or miss as always.
 */
function diagnosticHeaders(out: Answer): Record<string, string> {
  const headers: Record<string, string> = { 'X-Tollgate-Node': out.node }
  if (out.node !== 'cache' && out.node !== 'gateway') headers['X-Tollgate-Attempts'] = String(out.attempts)
  if (out.cache !== undefined) headers['X-Tollgate-Cache'] = out.cache
  if (out.consensus !== undefined) headers['X-Tollgate-Consensus'] = out.consensus
  if (out.verifiedAt !== undefined) headers['X-Tollgate-Verified'] = out.verifiedAt
  return headers
}
