import type { LimitsConfig } from '../config/types.js'
import type { NodeKind } from '../core/node-kind.js'
import type { GatewayError } from '../errors/registry.js'
import type { Answer } from '../upstream/answer.js'
import { saysStatePruned } from '../upstream/state-pruned.js'
import { groupForUpstream, type BatchPlan, type Copy, type Routed } from './batch-plan.js'
import { chargeWork } from './call-charge.js'
import { failed, type CallForwarder } from './call-forwarder.js'
import type { CallPolicies } from './call-policies.js'
import { waitQueued, type CallCharge, type CallsByKind, type Charged, type DispatchContext, type UsageSink } from './dispatch-context.js'
import { refusedWhole, type RpcAnswer } from './rpc-answer.js'
import type { UpstreamCaller } from './upstream-caller.js'

export interface BatchRunnerDeps {
  usage: UsageSink
  /** `batchConcurrency`: how many of a batch's calls go one by one at once; a reload replaces it. */
  limits: LimitsConfig
  /** Cache, in-flight sharing, upstream batches, then the pool. */
  calls: UpstreamCaller
  /** Each transport's method rules and charge (callPolicies). */
  policies: CallPolicies
}

const NODE_KINDS: readonly NodeKind[] = ['full', 'archive']

/**
 * Runs a planned client batch (planBatch): charges every call of it, copies included, at once;
 * sends the calls of each node kind to one node as one upstream batch, answers what the cache
 * holds at once, and sends the rest call by call a few at a time (CallForwarder); answers each
 * copy with its own id; counts the batch's usage in one tally. A batch of notifications only is
 * answered with nothing.
 * @example
 * const answer = await runner.run(ctx, planBatch(entries, route)) // { status: 200, body: '[…]' }
 */
export class BatchRunner {
  /** `deps` is the dispatcher's own object: a reload's limits (RpcDispatcher.setLimits) reach it. */
  constructor(
    private readonly deps: BatchRunnerDeps,
    private readonly forwarder: CallForwarder,
  ) {}

  async run(ctx: DispatchContext, plan: BatchPlan): Promise<RpcAnswer> {
    const { parts, routed, copies } = plan
    const tally = new BatchTally(plan.malformed)
    let subscribed: string[] | undefined
    if (routed.length > 0) {
      const charged = chargeOf(ctx, this.deps.policies[ctx.transport].charge, routed, copies)
      if (charged.refusal) return refusedWhole(charged.refusal)
      if (charged.delayMs > 0) await waitQueued(charged.delayMs)
      // A copy's answer is its first call's with its own id: kept only when the batch has copies.
      const outcomes = copies.length > 0 ? new Array<Answer | undefined>(parts.length) : undefined
      const record = (r: Routed, out: Answer): void => {
        // Work known only once answered (a verified call's EVM run): charged now, counted in its units.
        chargeWork(ctx, out.kind, out.extraUnits)
        tally.add(out, r.units + out.extraUnits, out.size)
        if (r.call.idJson !== undefined) parts[r.index] = out.text
        if (outcomes !== undefined) outcomes[r.index] = out
      }
      // The calls of each node kind go to one node as one upstream batch; what that leaves goes
      // call by call, with the calls the node's answer skipped and answers of pruned state
      // (retried on an archive node by the forwarder).
      const calls = this.deps.calls
      const { groups, alone } = groupForUpstream(routed, (method, params) => calls.sentAsIs(method, params))
      // Most batches use one node kind: one upstream batch awaited, no Promise.all around it.
      const sending: Promise<void>[] = []
      for (const kind of NODE_KINDS) if (groups[kind].length > 0) sending.push(this.#sendGroup(ctx, kind, groups[kind], alone, record))
      if (sending.length === 1) await sending[0]
      else if (sending.length > 1) await Promise.all(sending)
      // What the cache holds is answered at once, without the async path of a call each.
      if (alone.length > 0) {
        let kept = 0
        for (const r of alone) {
          const hit = r.local ? undefined : calls.cachedNow(ctx.network, r.kind, r.call.method, r.call.params, r.call.idJson ?? 'null')
          if (hit === undefined) alone[kept++] = r
          else record(r, hit)
        }
        alone.length = kept
      }
      // Bounded fan-out: a batch of 100 heavy calls must not take every upstream slot at once.
      let next = 0
      const worker = async (): Promise<void> => {
        while (next < alone.length) {
          const r = alone[next++]
          record(r, await this.forwarder.forward(ctx, r, r.local ? (subscribed ??= []) : undefined))
        }
      }
      const workers: Promise<void>[] = []
      for (let w = 0; w < Math.min(this.deps.limits.batchConcurrency, alone.length); w++) workers.push(worker())
      await Promise.all(workers)
      for (const c of copies) {
        const out = outcomes![c.of.index]!
        const body = out.withId(c.idJson ?? 'null').text
        tally.add(out, c.of.units, body.length)
        if (c.idJson !== undefined) parts[c.index] = body
      }
      tally.report(this.deps.usage, ctx)
    }
    const answered = parts.filter((p): p is string => p !== undefined)
    // A batch of notifications only is answered with nothing (JSON-RPC 2.0, section 6).
    if (answered.length === 0) return { status: 204, body: null, malformed: tally.malformed, subscribed }
    return { status: 200, body: `[${answered.join(',')}]`, malformed: tally.malformed, subscribed }
  }

  /**
   * A batch's calls of one node kind that go as they are: through the upstream caller (shared in
   * flight with other requests, the rest as one upstream batch). Each answer is recorded; a call
   * the node's answer skipped, or a full node's pruned state, joins `alone` to go by itself.
   */
  async #sendGroup(ctx: DispatchContext, kind: NodeKind, group: readonly Routed[], alone: Routed[], record: (r: Routed, out: Answer) => void): Promise<void> {
    const replies = await this.deps.calls.batch(ctx.network, ctx.pool, kind, group, ctx.key.account)
    // One failure of one upstream batch: one error (and one log line) for all its calls.
    const errors = new Map<Error, GatewayError>()
    for (let k = 0; k < group.length; k++) {
      const x = group[k]
      const reply = replies[k]
      if (reply instanceof Error) {
        let e = errors.get(reply)
        if (e === undefined) {
          const hit = group.filter((_, j) => replies[j] === reply)
          e = this.forwarder.upstreamError(ctx, reply, [...new Set(hit.map((y) => y.call.method))].join(','), hit.length)
          errors.set(reply, e)
        }
        record(x, failed(e, x))
      } else if (reply === undefined || (reply.isError && reply.kind === 'full' && saysStatePruned(reply))) alone.push(x)
      else record(x, reply)
    }
  }
}

/**
 * Charge the batch's calls and their units to the key's rate as the transport says
 * (CallPolicy.charge), all at once: each copy counts as the call it copies.
 */
function chargeOf(ctx: DispatchContext, charge: CallCharge, routed: readonly Routed[], copies: readonly Copy[]): Charged {
  const sum: CallsByKind = { full: 0, archive: 0, fullUnits: 0, archiveUnits: 0 }
  const add = (r: Routed): void => {
    if (r.kind === 'full') {
      sum.full++
      sum.fullUnits += r.units
    } else {
      sum.archive++
      sum.archiveUnits += r.units
    }
  }
  for (const r of routed) add(r)
  for (const c of copies) add(c.of)
  return charge(ctx, sum)
}

/** What a batch's answered calls used, by the node kind that answered them: the one place a batch's usage is counted. */
class BatchTally {
  readonly #byKind = { full: { calls: 0, errors: 0, bytes: 0, units: 0 }, archive: { calls: 0, errors: 0, bytes: 0, units: 0 } }

  /** @param malformed calls the plan already answered with a protocol error */
  constructor(public malformed: number) {}

  /** One call answered with `out` (a copy: with its own id, `bytes` long), charged `units`. */
  add(out: Answer, units: number, bytes: number): void {
    const s = this.#byKind[out.kind]
    s.calls++
    s.units += units
    if (out.isError) s.errors++
    if (out.malformed) this.malformed++
    s.bytes += bytes
  }

  /** One usage record per node kind the batch used. */
  report(usage: UsageSink, ctx: DispatchContext): void {
    let first = true
    for (const kind of NODE_KINDS) {
      const s = this.#byKind[kind]
      if (s.calls === 0) continue
      // Request bytes are counted once, with the first node kind the batch used.
      usage.served({
        accountId: ctx.key.account.accountId,
        keyId: ctx.key.record.keyId,
        network: ctx.network,
        kind,
        calls: s.calls,
        errors: s.errors,
        bytesIn: first ? ctx.bytesIn : 0,
        bytesOut: s.bytes,
        units: s.units,
      })
      first = false
    }
  }
}
