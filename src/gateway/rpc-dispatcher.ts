import type { NodeKind } from '../events/types.js'
import type { UpstreamPool, UpstreamReply } from '../upstream/pool.js'
import { NoHealthyUpstream, UpstreamTimeout } from '../upstream/errors.js'
import { ERRORS, GatewayError, errorResponseJson } from '../errors/registry.js'
import { isInvalid, type ParsedBody, type RpcCall, type RpcEntry } from '../rpc/parse.js'
import { methodRule } from '../rpc/method-policy.js'
import type { KeyContext } from './key-directory.js'
import type { UsageMeter } from '../usage/usage-meter.js'
import type { LimitsConfig } from '../config/types.js'

/** What to answer: an HTTP status, a JSON body (null: nothing, for notifications) and headers. */
export interface RpcAnswer {
  status: number
  readonly body: string | null
  headers?: Readonly<Record<string, string>>
  /**
   * The same body as UTF-8 bytes, when it is a node's answer kept as bytes: send these (a 1 MB
   * answer is then never decoded and encoded again); `body` decodes them when first read.
   */
  readonly bytes?: Buffer
}

export interface DispatchContext {
  readonly key: KeyContext
  readonly network: string
  readonly pool: UpstreamPool
  readonly bytesIn: number
}

/** Where the dispatcher counts calls: the UsageMeter (a no-op when a benchmark turns metering off). */
export type UsageSink = Pick<UsageMeter, 'served' | 'rateLimited'>

/** One call's outcome: the node's answer (client id spliced in) or the gateway's error for it. */
interface Forwarded {
  status: number
  readonly body: string
  isError: boolean
  /** The answer as bytes, when the node's bytes were kept (see UpstreamReply.bytes). */
  readonly bytes?: Buffer
}

/** A call ready to go upstream, with the node kind it was routed to. */
interface Routed {
  readonly call: RpcCall
  readonly kind: NodeKind
}

/**
 * Handles the JSON-RPC calls of one authenticated request, whatever the transport: method policy,
 * routing to a node kind, admission by the key's actor (each call of a batch counts), forwarding,
 * and usage metering. Batches are handled call by call: one bad call is one error entry.
 */
export class RpcDispatcher {
  constructor(
    private readonly deps: { usage: UsageSink; limits: LimitsConfig },
  ) {}

  async dispatch(ctx: DispatchContext, parsed: ParsedBody): Promise<RpcAnswer> {
    switch (parsed.kind) {
      case 'parse-error':
        return { status: ERRORS.PARSE_ERROR.http, body: errorResponseJson('null', ERRORS.PARSE_ERROR.rpc, parsed.message) }
      case 'empty-batch':
        return { status: ERRORS.EMPTY_BATCH.http, body: errorResponseJson('null', ERRORS.EMPTY_BATCH.rpc, ERRORS.EMPTY_BATCH.message) }
      case 'single':
        return this.#single(ctx, parsed.entry)
      case 'batch':
        return this.#batch(ctx, parsed.entries)
    }
  }

  async #single(ctx: DispatchContext, entry: RpcEntry): Promise<RpcAnswer> {
    if (isInvalid(entry)) return { status: 200, body: errorResponseJson(entry.idJson, entry.rpc, entry.message) }
    const routed = this.#route(ctx, entry)
    if (typeof routed === 'string') return answerOrNothing(entry, routed)
    const rejection = this.#admit(ctx, [routed])
    if (rejection) return rejection
    const out = await this.#forward(ctx, routed)
    this.deps.usage.served(ctx.key.account.accountId, ctx.key.record.keyId, ctx.network, routed.kind, 1, out.isError ? 1 : 0, ctx.bytesIn, sizeOf(out))
    if (entry.idJson === undefined) return { status: 204, body: null }
    if (out.bytes !== undefined) return { status: out.status, get body() { return out.body }, bytes: out.bytes }
    return { status: out.status, body: out.body }
  }

  async #batch(ctx: DispatchContext, entries: RpcEntry[]): Promise<RpcAnswer> {
    if (entries.length > this.deps.limits.maxBatch) {
      const e = new GatewayError('BATCH_TOO_LARGE', `Batch too large: ${entries.length} calls, at most ${this.deps.limits.maxBatch} are accepted in one batch; split it into several requests`)
      return { status: e.http, body: errorResponseJson('null', e.rpc, e.message) }
    }
    const parts = new Array<string | undefined>(entries.length)
    const routed: Array<{ index: number; r: Routed }> = []
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i]
      if (isInvalid(entry)) {
        parts[i] = errorResponseJson(entry.idJson, entry.rpc, entry.message)
        continue
      }
      const r = this.#route(ctx, entry)
      if (typeof r === 'string') parts[i] = entry.idJson === undefined ? undefined : r
      else routed.push({ index: i, r })
    }
    if (routed.length > 0) {
      const rejection = this.#admit(ctx, routed.map((x) => x.r))
      if (rejection) return rejection
      const served = { full: { n: 0, errors: 0, bytes: 0 }, archive: { n: 0, errors: 0, bytes: 0 } }
      const record = (index: number, r: Routed, out: Forwarded): void => {
        const s = served[r.kind]
        s.n++
        if (out.isError) s.errors++
        s.bytes += sizeOf(out)
        if (r.call.idJson !== undefined) parts[index] = out.body
      }
      // The calls of each node kind go to one node as ONE upstream batch (one frame or request,
      // not one per call: the profile's largest cost). What it leaves (unsafe methods, calls the
      // node's answer skipped) goes call by call below.
      const alone: typeof routed = []
      await Promise.all(
        (['full', 'archive'] as const).map(async (kind) => {
          const group = routed.filter((x) => x.r.kind === kind)
          if (group.length < 2) return void alone.push(...group)
          let replies: Array<UpstreamReply | undefined>
          try {
            const calls = group.map((x) => ({ method: x.r.call.method, params: x.r.call.params, clientIdJson: x.r.call.idJson ?? 'null' }))
            replies = await ctx.pool.callBatch(kind, calls, { timeoutMs: this.deps.limits.upstreamTimeoutMs })
          } catch (err) {
            for (const x of group) record(x.index, x.r, this.#failure(ctx, x.r, err))
            return
          }
          group.forEach((x, k) => {
            const reply = replies[k]
            if (reply === undefined) alone.push(x)
            else record(x.index, x.r, { status: 200, body: reply.body, isError: reply.isError })
          })
        }),
      )
      // Bounded fan-out: a batch of 100 heavy calls must not take every upstream slot at once.
      let next = 0
      const worker = async (): Promise<void> => {
        while (next < alone.length) {
          const { index, r } = alone[next++]
          record(index, r, await this.#forward(ctx, r))
        }
      }
      const workers: Promise<void>[] = []
      for (let w = 0; w < Math.min(this.deps.limits.batchConcurrency, alone.length); w++) workers.push(worker())
      await Promise.all(workers)
      let first = true
      for (const kind of ['full', 'archive'] as const) {
        const s = served[kind]
        if (s.n === 0) continue
        // Request bytes are counted once, with the first node kind the batch used.
        this.deps.usage.served(ctx.key.account.accountId, ctx.key.record.keyId, ctx.network, kind, s.n, s.errors, first ? ctx.bytesIn : 0, s.bytes)
        first = false
      }
    }
    const answered = parts.filter((p): p is string => p !== undefined)
    // A batch of notifications only is answered with nothing (JSON-RPC 2.0, section 6).
    if (answered.length === 0) return { status: 204, body: null }
    return { status: 200, body: `[${answered.join(',')}]` }
  }

  /** The node kind for a call, or the JSON text of the error that answers it. */
  #route(ctx: DispatchContext, call: RpcCall): Routed | string {
    const idJson = call.idJson ?? 'null'
    const rule = methodRule(call.method)
    if (!rule.ok) return errorResponseJson(idJson, ERRORS.METHOD_NOT_FOUND.rpc, rule.message)
    const limits = ctx.key.actor.state.limits
    if (rule.needs === 'archive') {
      if (limits.archive === 0) {
        return errorResponseJson(idJson, ERRORS.METHOD_NOT_FOUND.rpc, `Method not found: ${call.method.split('_')[0]}_* needs an archive node; the ${ctx.key.plan?.name ?? 'current'} plan has no archive access`)
      }
      return { call, kind: 'archive' }
    }
    // Full nodes serve everything else; archive nodes stand in when the network has no full node.
    if (!ctx.pool.hasKind('full') && ctx.pool.hasKind('archive') && limits.archive !== 0) return { call, kind: 'archive' }
    return { call, kind: 'full' }
  }

  /** Admit every routed call with the key's actor; the 429 answer when it says no. */
  #admit(ctx: DispatchContext, routed: readonly Routed[]): RpcAnswer | undefined {
    let full = 0
    let archive = 0
    for (const r of routed) {
      if (r.kind === 'full') full++
      else archive++
    }
    for (const [kind, calls] of [['full', full], ['archive', archive]] as const) {
      if (calls === 0) continue
      const d = ctx.key.actor.admit(kind, calls)
      if (d.type === 'Rejected' && d.reason === 'no-access') {
        const e = new GatewayError('NODE_KIND_NOT_ALLOWED', `Forbidden: the ${ctx.key.plan?.name ?? 'current'} plan has no ${kind}-node access; choose a plan that includes ${kind} nodes`)
        return { status: e.http, body: errorResponseJson('null', e.rpc, e.message) }
      }
      if (d.type === 'Rejected') {
        this.deps.usage.rateLimited(ctx.key.account.accountId, ctx.key.record.keyId, ctx.network, kind, calls)
        const retryAfterS = Math.max(1, Math.ceil(d.retryAfterMs / 1000))
        const e = new GatewayError('RATE_LIMITED', `Rate limit exceeded: this key may make ${d.limit} ${kind}-node calls per second; retry after ${retryAfterS} s, with exponential backoff`)
        return {
          status: e.http,
          body: errorResponseJson('null', e.rpc, e.message),
          headers: {
            'Retry-After': String(retryAfterS),
            'RateLimit-Limit': String(d.limit),
            'RateLimit-Remaining': '0',
            'RateLimit-Reset': String(Math.max(1, Math.ceil(d.resetMs / 1000))),
          },
        }
      }
    }
    return undefined
  }

  /** Send one call upstream; gateway failures become this call's JSON-RPC error. */
  async #forward(ctx: DispatchContext, r: Routed): Promise<Forwarded> {
    let reply: UpstreamReply
    try {
      reply = await ctx.pool.call(r.kind, r.call.method, r.call.params, r.call.idJson ?? 'null', { timeoutMs: this.deps.limits.upstreamTimeoutMs })
    } catch (err) {
      return this.#failure(ctx, r, err)
    }
    if (reply.bytes !== undefined) return { status: 200, get body() { return reply.body }, bytes: reply.bytes, isError: reply.isError }
    return { status: 200, body: reply.body, isError: reply.isError }
  }

  /** A call the upstream could not serve, as its JSON-RPC error. */
  #failure(ctx: DispatchContext, r: Routed, err: unknown): Forwarded {
    const e =
      err instanceof NoHealthyUpstream
        ? new GatewayError('NO_HEALTHY_UPSTREAM', `No healthy ${r.kind} node for ${ctx.network} right now; retry with backoff`, { cause: err })
        : err instanceof UpstreamTimeout
          ? new GatewayError('UPSTREAM_TIMEOUT', undefined, { cause: err })
          : new GatewayError('UPSTREAM_ERROR', undefined, { cause: err })
    return { status: e.http, body: errorResponseJson(r.call.idJson ?? 'null', e.rpc, e.message), isError: true }
  }
}

/** Bytes out for usage: the bytes when kept, else the text's length (what was counted before bytes were kept). */
function sizeOf(out: Forwarded): number {
  return out.bytes !== undefined ? out.bytes.length : out.body.length
}

function answerOrNothing(entry: RpcCall, errorJson: string): RpcAnswer {
  if (entry.idJson === undefined) return { status: 204, body: null }
  return { status: 200, body: errorJson }
}
