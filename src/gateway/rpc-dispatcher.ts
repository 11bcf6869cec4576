import type { NodeKind } from '../core/node-kind.js'
import type { UpstreamPool } from '../upstream/pool.js'
import { Answer } from '../upstream/answer.js'
import { ERRORS, GatewayError, errorResponseJson } from '../errors/registry.js'
import { isInvalid, type ParsedBody, type RpcCall, type RpcEntry } from '../rpc/parse.js'
import type { MethodRule } from '../rpc/method-policy.js'
import type { Access } from '../plans/entitlements.js'
import type { KeyContext } from './key-directory.js'
import type { UsageMeter } from '../usage/usage-meter.js'
import type { LimitsConfig } from '../config/types.js'
import { newestBlockOf, route, type RouteContext } from './router.js'
import { saysStatePruned } from '../upstream/state-pruned.js'
import type { HeadTracker } from './head-tracker.js'
import type { FilterPin, FilterPins } from './filter-pins.js'
import { filterCapRefusal } from './filter-cap-refusal.js'
import { saysFilterGone } from './filter-gone.js'
import type { UpstreamCaller } from './upstream-caller.js'
import { groupForUpstream, planBatch, type Copy, type Refused, type Routed } from './batch-plan.js'
import type { ServerErrorContext } from './fault-log.js'
import { gatewayErrorFor } from './upstream-failure.js'
import { paramsJson, rememberParamsJson } from '../rpc/params-json.js'
import { HEAVY_RETRY_AFTER_S, type HeavyCalls } from './heavy-calls.js'
import { refuseByKeyRules } from './key-rules.js'

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
   * Calls answered with a protocol error (-32700, -32600, -32601, -32602), by the gateway or by
   * the node: malformed or unsupported messages, which the WebSocket penalty counts.
   */
  malformed?: number
  /**
   * Subscriptions the message's local calls created (eth_subscribe over WebSocket): the session
   * lets their notifications through once this answer is sent, and not before (the client must
   * know the id before a notification names it).
   */
  subscribed?: string[]
}

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
  /** What differs between the transports the calls come over, said by each transport (see CallPolicy). */
  readonly policy: CallPolicy
  /** Answers the calls the policy marks `local` (eth_subscribe and eth_unsubscribe over WebSocket). */
  readonly local?: LocalCalls
}

/**
 * How a transport's calls are handled, given by the transport (src/front/http-rpc-route.ts,
 * src/ws/ws-session.ts) so that the dispatcher never asks which one it serves.
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
  /** Whether a node's protocol error answer counts as a malformed call (the WebSocket penalty). */
  readonly notesMalformed: boolean
}

/**
 * Charges `full` and `archive` calls of a message, and their compute units, to its key: how long
 * to queue them, or the refusal.
 */
export type CallCharge = (ctx: DispatchContext, full: number, archive: number, fullUnits: number, archiveUnits: number) => Charged

export type Charged = { readonly delayMs: number; readonly refusal?: undefined } | { readonly refusal: RpcAnswer; readonly delayMs?: undefined }

/** What a local call answers: the response text with the client's id in it. */
export interface LocalAnswer {
  body: string
  isError: boolean
  /** A malformed or unsupported call (counts towards the WebSocket penalty). */
  malformed: boolean
  /** The gateway error the body carries, when it is one (a 5xx is logged with its cause). */
  failure?: GatewayError
  /** The subscription id an eth_subscribe created (RpcAnswer.subscribed). */
  subscribed?: string
}

/** Calls the gateway answers itself rather than a node: one per WebSocket session, not per message. */
export interface LocalCalls {
  call(call: RpcCall, idJson: string, kind: NodeKind): Promise<LocalAnswer>
}

/** Where the dispatcher counts calls: the UsageMeter (a no-op when a benchmark turns metering off). */
export type UsageSink = Pick<UsageMeter, 'served' | 'rateLimited' | 'keyRuleRefused'>

export interface RpcDispatcherDeps {
  usage: UsageSink
  limits: LimitsConfig
  heads: HeadTracker
  filters: FilterPins
  /** Blocks of state full nodes keep; older state is routed to archive nodes. */
  windowBlocks: number
  /** Cache, in-flight sharing, getLogs splitting, heavy time-outs, then the pool. */
  calls: UpstreamCaller
  /** Each 5xx error the gateway answers a call with, with its cause (FaultLog.answered). */
  onServerError?: (e: GatewayError, at: ServerErrorContext) => void
  /** Tell the client how a single call was served (diagnostics.responseHeaders; see diagnosticHeaders). */
  diagnosticHeaders?: boolean
  /** Each key's heavy calls at once (absent: no bound). */
  heavy?: HeavyCalls
}

const NODE_KINDS: readonly NodeKind[] = ['full', 'archive']

const PROTOCOL_ERROR_CODES: ReadonlySet<number> = new Set([-32700, -32600, -32601, -32602])

/** A single call refused for its key's heavy calls at once (the only 429 a call's own answer carries). */
const HEAVY_RETRY: Readonly<Record<string, string>> = Object.freeze({ 'Retry-After': String(HEAVY_RETRY_AFTER_S) })

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Handles the JSON-RPC calls of one authenticated request, whatever the transport: method policy,
 * routing to a node kind, the transport's charge to the key's rate (each call of a batch counts),
 * forwarding, and usage metering. Batches are handled call by call: one bad call is one error entry.
 */
export class RpcDispatcher {
  constructor(private readonly deps: RpcDispatcherDeps) {}

  /** A reload's limits (maxBatch, batchConcurrency), for the requests that come from now on. */
  setLimits(limits: LimitsConfig): void {
    this.deps.limits = limits
  }

  /**
   * The calls a parsed message costs the key's rate: each call of a batch it will handle, and one
   * for anything refused whole (bad JSON, an empty batch, a batch over `limits.maxBatch`): refused
   * work is free, or a refused batch of 10,000 would throttle the key for seconds.
   */
  costOf(parsed: ParsedBody): number {
    return parsed.kind === 'batch' && parsed.entries.length <= this.deps.limits.maxBatch ? parsed.entries.length : 1
  }

  // Not async: it hands on #single's or #batch's promise (one promise fewer per request).
  dispatch(ctx: DispatchContext, parsed: ParsedBody): Promise<RpcAnswer> {
    switch (parsed.kind) {
      case 'parse-error':
        return Promise.resolve({ status: ERRORS.PARSE_ERROR.http, body: errorResponseJson('null', ERRORS.PARSE_ERROR.rpc, parsed.message), malformed: 1 })
      case 'empty-batch':
        return Promise.resolve({
          status: ERRORS.EMPTY_BATCH.http,
          body: errorResponseJson('null', ERRORS.EMPTY_BATCH.rpc, ERRORS.EMPTY_BATCH.message),
          malformed: 1,
        })
      case 'single':
        return this.#single(ctx, parsed.entry)
      case 'batch':
        return this.#batch(ctx, parsed.entries)
    }
  }

  async #single(ctx: DispatchContext, entry: RpcEntry): Promise<RpcAnswer> {
    if (isInvalid(entry)) return { status: 200, body: errorResponseJson(entry.idJson, entry.rpc, entry.message), malformed: 1 }
    const routed = this.#route(ctx, entry, this.#routeContext(ctx))
    if ('refused' in routed) {
      const malformed = routed.malformed ? 1 : 0
      if (entry.idJson === undefined) return { status: 204, body: null, malformed }
      return { status: routed.status, body: routed.body, malformed }
    }
    // One call: its kind and cost as they are (no array of one per request).
    const cost = routed.units
    const charged = routed.kind === 'full' ? ctx.policy.charge(ctx, 1, 0, cost, 0) : ctx.policy.charge(ctx, 0, 1, 0, cost)
    if (charged.refusal) return charged.refusal
    if (charged.delayMs > 0) await sleep(charged.delayMs)
    const subscribed: string[] | undefined = routed.local ? [] : undefined
    const out = await this.#forward(ctx, routed, subscribed)
    this.deps.usage.served(ctx.key.account.accountId, ctx.key.record.keyId, ctx.network, out.kind, 1, out.isError ? 1 : 0, ctx.bytesIn, out.size, cost)
    const malformed = out.malformed ? 1 : 0
    // An eth_subscribe that made a subscription: the WebSocket session takes its id from here.
    const made = subscribed !== undefined && subscribed.length > 0 ? subscribed : undefined
    if (entry.idJson === undefined) return { status: 204, body: null, malformed, subscribed: made }
    let headers = this.deps.diagnosticHeaders === true ? diagnosticHeaders(out) : out.cache === undefined ? undefined : { 'X-Tollgate-Cache': out.cache }
    // No node could take the call now (none healthy, or all at capacity): a second is the usual wait.
    if (out.status === 503) headers = { ...headers, 'Retry-After': '1' }
    // Its key's heavy calls at once were all running (HEAVY_CALLS_BUSY).
    else if (out.status === 429) headers = { ...headers, ...HEAVY_RETRY }
    return { status: out.status, body: out, headers, malformed, subscribed: made }
  }

  async #batch(ctx: DispatchContext, entries: RpcEntry[]): Promise<RpcAnswer> {
    if (entries.length > this.deps.limits.maxBatch) {
      const e = new GatewayError(
        'BATCH_TOO_LARGE',
        `Batch too large: ${entries.length} calls, at most ${this.deps.limits.maxBatch} are accepted in one batch; split it into several requests`,
      )
      return { status: e.http, body: errorResponseJson('null', e.rpc, e.message), malformed: 1 }
    }
    // What routing reads of the key, the nodes and the head: once for the batch, not per call.
    const routeContext = this.#routeContext(ctx)
    const { parts, routed, copies, malformed: refusedMalformed } = planBatch(entries, (call, i) => this.#route(ctx, call, routeContext, i))
    let malformed = refusedMalformed
    let subscribed: string[] | undefined
    if (routed.length > 0) {
      const charged = this.#charge(ctx, routed, copies)
      if (charged.refusal) return charged.refusal
      if (charged.delayMs > 0) await sleep(charged.delayMs)
      const served = { full: { n: 0, errors: 0, bytes: 0, units: 0 }, archive: { n: 0, errors: 0, bytes: 0, units: 0 } }
      const outcomes = copies.length > 0 ? new Array<Answer | undefined>(entries.length) : undefined
      const record = (r: Routed, out: Answer): void => {
        const s = served[out.kind]
        s.n++
        s.units += r.units
        if (out.isError) s.errors++
        if (out.malformed) malformed++
        s.bytes += out.size
        if (r.call.idJson !== undefined) parts[r.index] = out.text
        if (outcomes !== undefined) outcomes[r.index] = out
      }
      // The calls of each node kind go to one node as one upstream batch; what that leaves goes
      // call by call below, through #forward, with the calls the node's answer skipped and answers
      // of pruned state (retried on an archive node).
      const calls = this.deps.calls
      const { groups, alone } = groupForUpstream(routed, (method, params) => calls.sentAsIs(method, params))
      const sendGroup = async (kind: NodeKind, group: Routed[]): Promise<void> => {
        const replies = await this.#sendGroup(ctx, kind, group)
        // One failure of one upstream batch: one error (and one log line) for all its calls.
        const errors = new Map<Error, GatewayError>()
        for (let k = 0; k < group.length; k++) {
          const x = group[k]
          const reply = replies[k]
          if (reply instanceof Error) {
            let e = errors.get(reply)
            if (e === undefined) {
              const hit = group.filter((_, j) => replies[j] === reply)
              e = this.#upstreamError(ctx, reply, [...new Set(hit.map((y) => y.call.method))].join(','), hit.length)
              errors.set(reply, e)
            }
            record(x, failed(e, x))
          } else if (reply === undefined || (reply.isError && reply.kind === 'full' && saysStatePruned(reply))) alone.push(x)
          else record(x, forwarded(reply, malformedAnswer(ctx, reply)))
        }
      }
      // Most batches use one node kind: one upstream batch awaited, no Promise.all around it.
      const sending: Promise<void>[] = []
      for (const kind of NODE_KINDS) if (groups[kind].length > 0) sending.push(sendGroup(kind, groups[kind]))
      if (sending.length === 1) await sending[0]
      else if (sending.length > 1) await Promise.all(sending)
      // What the cache holds is answered at once, without the async path of a call each.
      if (alone.length > 0) {
        let kept = 0
        for (const r of alone) {
          const hit = r.local ? undefined : calls.cachedNow(ctx.network, r.kind, r.call.method, r.call.params, r.call.idJson ?? 'null')
          if (hit === undefined) alone[kept++] = r
          else record(r, forwarded(hit, false))
        }
        alone.length = kept
      }
      // Bounded fan-out: a batch of 100 heavy calls must not take every upstream slot at once.
      let next = 0
      const worker = async (): Promise<void> => {
        while (next < alone.length) {
          const r = alone[next++]
          record(r, await this.#forward(ctx, r, r.local ? (subscribed ??= []) : undefined))
        }
      }
      const workers: Promise<void>[] = []
      for (let w = 0; w < Math.min(this.deps.limits.batchConcurrency, alone.length); w++) workers.push(worker())
      await Promise.all(workers)
      for (const c of copies) {
        const out = outcomes![c.of.index]!
        const body = out.withId(c.idJson ?? 'null').text
        const s = served[out.kind]
        s.n++
        s.units += c.of.units
        if (out.isError) s.errors++
        if (out.malformed) malformed++
        s.bytes += body.length
        if (c.idJson !== undefined) parts[c.index] = body
      }
      let first = true
      for (const kind of ['full', 'archive'] as const) {
        const s = served[kind]
        if (s.n === 0) continue
        // Request bytes are counted once, with the first node kind the batch used.
        this.deps.usage.served(ctx.key.account.accountId, ctx.key.record.keyId, ctx.network, kind, s.n, s.errors, first ? ctx.bytesIn : 0, s.bytes, s.units)
        first = false
      }
    }
    const answered = parts.filter((p): p is string => p !== undefined)
    // A batch of notifications only is answered with nothing (JSON-RPC 2.0, section 6).
    if (answered.length === 0) return { status: 204, body: null, malformed, subscribed }
    return { status: 200, body: `[${answered.join(',')}]`, malformed, subscribed }
  }

  /**
   * A batch's calls of one node kind that go as they are: through the upstream caller (shared in
   * flight with other requests, the rest as one upstream batch), else straight to the pool as one
   * upstream batch. Per call: the answer, undefined (send it alone), or the failure that answered it.
   */
  #sendGroup(ctx: DispatchContext, kind: NodeKind, group: readonly Routed[]): Promise<Array<Answer | Error | undefined>> {
    return this.deps.calls.batch(ctx.network, ctx.pool, kind, group, ctx.key.account)
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

  /** The node kind for a call, or the answer that refuses it. */
  #route(ctx: DispatchContext, call: RpcCall, routeContext: RouteContext, index = 0): Routed | Refused {
    const idJson = call.idJson ?? 'null'
    const denied = refuseByKeyRules(ctx.key, ctx.network, call, this.deps.usage)
    if (denied !== undefined) return denied
    const rule = ctx.policy.methodRule(call.method, ctx.network)
    if (!rule.ok) return { refused: true, status: 200, body: errorResponseJson(idJson, ERRORS.METHOD_NOT_FOUND.rpc, rule.message), malformed: true }
    const r = route(call.method, rule.spec, call.params, routeContext)
    if ('refuse' in r) {
      const spec = ERRORS[r.refuse]
      return { refused: true, status: spec.http, body: errorResponseJson(idJson, spec.rpc, r.message), malformed: PROTOCOL_ERROR_CODES.has(spec.rpc) }
    }
    const spec = rule.spec
    return {
      call,
      spec,
      kind: r.kind,
      // A split eth_getLogs costs its method's units per chunk (each a node call); any other call its method's units.
      units: spec.path === 'logs' ? spec.cost * this.deps.calls.logs.chunksFor(call.params, routeContext.head) : spec.cost,
      local: rule.local === true,
      index,
      paramsJson: call.paramsJson === undefined ? paramsJson(call.params) : rememberParamsJson(call.params, call.paramsJson),
    }
  }

  /** Charge the calls and their units to the key's rate as the transport says (CallPolicy.charge): each copy counts. */
  #charge(ctx: DispatchContext, routed: readonly Routed[], copies: readonly Copy[]): Charged {
    let full = 0
    let archive = 0
    let fullUnits = 0
    let archiveUnits = 0
    for (const r of routed) {
      if (r.kind === 'full') {
        full++
        fullUnits += r.units
      } else {
        archive++
        archiveUnits += r.units
      }
    }
    for (const c of copies) {
      if (c.of.kind === 'full') {
        full++
        fullUnits += c.of.units
      } else {
        archive++
        archiveUnits += c.of.units
      }
    }
    return ctx.policy.charge(ctx, full, archive, fullUnits, archiveUnits)
  }

  /**
   * Send one call upstream; gateway failures become this call's JSON-RPC error. A local call is
   * answered by the transport (ctx.local); a subscription it creates goes into `subscribed`.
   */
  async #forward(ctx: DispatchContext, r: Routed, subscribed?: string[]): Promise<Answer> {
    const idJson = r.call.idJson ?? 'null'
    if (r.local) return this.#local(ctx, r, idJson, subscribed)
    // Filter calls keep their own books (FilterPins); an ordinary call pays this one check.
    if (r.spec.filter !== undefined) return this.#filterCall(ctx, r, idJson)
    try {
      let reply = await this.#call(ctx, r, r.kind, idJson, undefined)
      // Old state behind a block hash (or a head not known yet) reaches a full node that pruned it:
      // one more try on an archive node, when the key has archive access (without it the client
      // gets the full node's own answer). Only on a node's own pruned-state error (saysStatePruned),
      // never on a revert's words; charged as the archive call it is, or refused as one.
      if (reply.isError && reply.kind === 'full' && ctx.access.archive && ctx.pool.hasKind('archive') && saysStatePruned(reply)) {
        const charged = ctx.policy.charge(ctx, 0, 1, 0, r.spec.cost)
        if (charged.refusal !== undefined) return refusedRetry(charged.refusal, idJson, r.kind)
        if (charged.delayMs > 0) await sleep(charged.delayMs)
        reply = await this.#call(ctx, r, 'archive', idJson, undefined)
      }
      return forwarded(reply, malformedAnswer(ctx, reply))
    } catch (err) {
      return this.#failure(ctx, r, err)
    }
  }

  /**
   * A filter call, on the node that holds the filter (FilterPins): a new filter takes room in its
   * key's and account's shares (an idle one of theirs is uninstalled for it, or it is refused),
   * eth_uninstallFilter and the node's own "filter not found" free it.
   */
  async #filterCall(ctx: DispatchContext, r: Routed, idJson: string): Promise<Answer> {
    const filters = this.deps.filters
    const keyId = ctx.key.record.keyId
    if (r.spec.filter === 'create') {
      const room = filters.reserve(ctx.network, keyId, ctx.key.record.accountId, this.deps.limits)
      if (!room.ok) return failed(filterCapRefusal(ctx.network, room.limit, room.held, room.max), r)
      if (room.evicted !== undefined) this.#uninstall(ctx, room.evicted)
      let made: { filterId: string; node: string; kind: NodeKind } | undefined
      try {
        const reply = await this.#call(ctx, r, r.kind, idJson, undefined)
        const id = reply.isError ? undefined : /"result"\s*:\s*"([^"]+)"/.exec(reply.text)?.[1]
        if (id !== undefined) made = { filterId: id, node: reply.node, kind: reply.kind }
        return forwarded(reply, malformedAnswer(ctx, reply))
      } catch (err) {
        return this.#failure(ctx, r, err)
      } finally {
        filters.made(ctx.network, keyId, made)
      }
    }
    const params = r.call.params as unknown[] | undefined
    const filterId = Array.isArray(params) ? params[0] : undefined
    const node = filters.nodeOf(ctx.network, filterId, keyId)
    if (node === undefined) {
      // As geth says it, so that clients (ethers) recreate the filter.
      return Answer.gatewayError(errorResponseJson(idJson, ERRORS.FILTER_NOT_FOUND.rpc, ERRORS.FILTER_NOT_FOUND.message), 200, r.kind)
    }
    if (r.spec.filter === 'uninstall') filters.forget(ctx.network, filterId, keyId)
    try {
      const reply = await this.#call(ctx, r, r.kind, idJson, node)
      // The node dropped it (its own idle time-out, a restart): the key's share has room again.
      if (reply.isError && saysFilterGone(reply)) filters.forget(ctx.network, filterId, keyId)
      return forwarded(reply, malformedAnswer(ctx, reply))
    } catch (err) {
      return this.#failure(ctx, r, err)
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

  /** A call the upstream could not serve, as its JSON-RPC error. */
  #failure(ctx: DispatchContext, r: Routed, err: unknown): Answer {
    return failed(this.#upstreamError(ctx, err, r.call.method), r)
  }

  /**
   * The gateway error for an upstream failure (see gatewayErrorFor), reported with its cause.
   * @param method the call's method (an upstream batch: its methods, comma-separated)
   * @param calls calls of an upstream batch answered with it (undefined: one call)
   */
  #upstreamError(ctx: DispatchContext, err: unknown, method: string, calls?: number): GatewayError {
    const e = gatewayErrorFor(err, ctx.network)
    // A 429 (heavy calls at once) is the client's limit, not a fault of the gateway or a node.
    if (e.http >= 500) this.deps.onServerError?.(e, { network: ctx.network, method, calls })
    return e
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
    const heavy = r.spec.heavy === true ? this.deps.heavy?.slotFor(ctx.key) : undefined
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
  return headers
}

/** A gateway error as a call's answer. */
function failed(e: GatewayError, r: Routed): Answer {
  return Answer.gatewayError(errorResponseJson(r.call.idJson ?? 'null', e.rpc, e.message), e.http, r.kind)
}

/**
 * The archive retry of a pruned answer refused by the key's archive limits: the refusal, with the
 * client's id, as this call's answer. Its kind is the full node's that served the call (usage counts
 * that call; the refused archive call is counted as rate-limited by the charge).
 */
function refusedRetry(refusal: RpcAnswer, idJson: string, kind: NodeKind): Answer {
  const body = typeof refusal.body === 'string' ? refusal.body : errorResponseJson('null', ERRORS.RATE_LIMITED.rpc, ERRORS.RATE_LIMITED.message)
  return Answer.gatewayError(body, refusal.status, kind).withId(idJson)
}

/** A node's answer, marked when it says the call was malformed. */
function forwarded(reply: Answer, malformed: boolean): Answer {
  if (malformed) reply.malformed = true
  return reply
}

/** Only the WebSocket penalty needs to know, and only error answers (small) can say so. */
function malformedAnswer(ctx: DispatchContext, reply: Answer): boolean {
  return ctx.policy.notesMalformed && reply.isError && isProtocolError(reply.text)
}

/** Whether a node's error answer is a protocol error (a malformed or unsupported call). */
function isProtocolError(body: string): boolean {
  try {
    const code = (JSON.parse(body) as { error?: { code?: unknown } }).error?.code
    return typeof code === 'number' && PROTOCOL_ERROR_CODES.has(code)
  } catch {
    return false
  }
}
