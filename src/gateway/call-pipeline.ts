import type { LimitsConfig } from '../config/types.js'
import type { NodeKind } from '../core/node-kind.js'
import type { GatewayError } from '../errors/registry.js'
import type { Answer } from '../upstream/answer.js'
import { groupForUpstream, type BatchPlan, type Copy } from './batch-plan.js'
import { chargeWork } from './call-charge.js'
import { failed, type CallForwarder } from './call-forwarder.js'
import type { CallPolicies } from './call-policies.js'
import type { GatewayCall } from './gateway-call.js'
import { waitQueued, type CallCharge, type CallsByKind, type Charged, type DispatchContext, type UsageSink } from './dispatch-context.js'
import type { UpstreamCaller } from './upstream-caller.js'

export interface CallPipelineDeps {
  usage: UsageSink
  /** `batchConcurrency` in force: how many of a batch's calls go one by one at once (read per batch, so a reload's holds from the next). */
  limits: () => LimitsConfig
  /** Cache, in-flight sharing, upstream batches, then the pool. */
  caller: UpstreamCaller
  /** Each transport's method rules and charge (callPolicies). */
  policies: CallPolicies
}

const NODE_KINDS: readonly NodeKind[] = ['full', 'archive']

/** What a planned message came to: refused whole by its charge, or served (the plan's parts filled). */
export interface PlanServed {
  /** The charge refused the message whole (a rate limit, a node kind the plan lacks). */
  readonly refusal?: GatewayError
  /** Calls answered with a protocol error, by the plan or the nodes (the WebSocket penalty counts them). */
  readonly invalid: number
  /** Subscriptions its local calls made (eth_subscribe over WebSocket). */
  readonly subscribed?: string[]
  /** A single call's answer (CallPipeline.one), as the node gave it: its bytes, its node, its cache hit. */
  readonly answer?: Answer
}

/**
 * The one way a message's calls are served, whatever the transport and however many they are:
 * charges every call of the plan, copies included, at once; waits for its tokens; sends the calls
 * of each node kind to one node as one upstream batch, answers what the cache holds at once, and
 * sends the rest call by call a few at a time (CallForwarder); answers each copy with its own id;
 * counts the message's usage (`meter`, the one place usage is counted). A single call is the plan
 * of one taken by the same steps without a plan's arrays (`one`): the commonest message of all.
 * @example
 * const served = await pipeline.run(ctx, planBatch(entries, route)) // plan.parts filled: '[…]' once joined
 * const single = await pipeline.one(ctx, call) // single.answer: the node's Answer, bytes kept
 */
export class CallPipeline {
  constructor(
    private readonly deps: CallPipelineDeps,
    private readonly forwarder: CallForwarder,
  ) {}

  /**
   * A single call: charged, waited for, forwarded and metered by the steps a batch's calls take,
   * without the plan's arrays, the recording closure or the tally a batch needs (measured: a plan
   * of one made small calls cost 1-3 % more CPU per call than this).
   */
  async one(ctx: DispatchContext, c: GatewayCall): Promise<PlanServed> {
    const sum: CallsByKind = { full: 0, archive: 0, fullUnits: 0, archiveUnits: 0 }
    addCall(sum, c)
    const charged = this.deps.policies[ctx.transport].charge(ctx, sum)
    if (charged.refusal) return { refusal: charged.refusal, invalid: 0 }
    if (charged.delayMs > 0) await waitQueued(charged.delayMs)
    let subscribed: string[] | undefined
    const out = await this.forwarder.forward(ctx, c, c.local ? (subscribed = []) : undefined)
    // Work known only once answered (a verified call's EVM run): charged now, counted in its units.
    chargeWork(ctx, out.kind, out.extraUnits)
    meter(this.deps.usage, ctx, out.kind, { calls: 1, errors: out.isError ? 1 : 0, bytes: out.size, units: c.units + out.extraUnits }, ctx.bytesIn)
    return { invalid: out.invalid ? 1 : 0, subscribed: subscribed !== undefined && subscribed.length > 0 ? subscribed : undefined, answer: out }
  }

  async run(ctx: DispatchContext, plan: BatchPlan): Promise<PlanServed> {
    const { parts, routed, copies } = plan
    const tally = new UsageTally(plan.invalid)
    let subscribed: string[] | undefined
    if (routed.length > 0) {
      const charged = chargeOf(ctx, this.deps.policies[ctx.transport].charge, routed, copies)
      if (charged.refusal) return { refusal: charged.refusal, invalid: tally.invalid }
      if (charged.delayMs > 0) await waitQueued(charged.delayMs)
      // A copy's answer is its first call's with its own id: kept only when the batch has copies.
      const outcomes = copies.length > 0 ? new Array<Answer | undefined>(parts.length) : undefined
      const record = (r: GatewayCall, out: Answer): void => {
        // Work known only once answered (a verified call's EVM run): charged now, counted in its units.
        chargeWork(ctx, out.kind, out.extraUnits)
        tally.add(out, r.units + out.extraUnits, out.size)
        if (r.answered) parts[r.index] = out.text
        if (outcomes !== undefined) outcomes[r.index] = out
      }
      if (routed.length === 1 && copies.length === 0) {
        // A batch of one call to forward: to the forwarder as it is (no grouping, no cache lookup of its own, no worker).
        const r = routed[0]
        record(r, await this.forwarder.forward(ctx, r, r.local ? (subscribed = []) : undefined))
      } else {
        subscribed = await this.#many(ctx, routed, record)
        for (const c of copies) {
          const out = outcomes![c.of.index]!
          const body = out.withId(c.idJson ?? 'null').text
          tally.add(out, c.of.units, body.length)
          if (c.idJson !== undefined) parts[c.index] = body
        }
      }
      tally.report(this.deps.usage, ctx)
    }
    return { invalid: tally.invalid, subscribed: subscribed !== undefined && subscribed.length > 0 ? subscribed : undefined }
  }

  /**
   * Several calls: each node kind's that go as they are as one upstream batch, the cache's answered
   * at once, the rest call by call, a few at a time. @returns the subscriptions its local calls made
   */
  async #many(ctx: DispatchContext, routed: readonly GatewayCall[], record: (r: GatewayCall, out: Answer) => void): Promise<string[] | undefined> {
    let subscribed: string[] | undefined
    // The calls of each node kind go to one node as one upstream batch; what that leaves goes
    // call by call, with the calls the node's answer skipped.
    const caller = this.deps.caller
    const { groups, alone } = groupForUpstream(routed, (c) => caller.sentAsIs(c))
    // Most batches use one node kind: one upstream batch awaited, no Promise.all around it.
    const sending: Promise<void>[] = []
    for (const kind of NODE_KINDS) if (groups[kind].length > 0) sending.push(this.#sendGroup(ctx, groups[kind], alone, record))
    if (sending.length === 1) await sending[0]
    else if (sending.length > 1) await Promise.all(sending)
    // What the cache holds is answered at once, without the async path of a call each.
    if (alone.length > 0) {
      let kept = 0
      for (const r of alone) {
        const hit = r.local ? undefined : caller.cachedNow(r)
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
    for (let w = 0; w < Math.min(this.deps.limits().batchConcurrency, alone.length); w++) workers.push(worker())
    await Promise.all(workers)
    return subscribed
  }

  /**
   * A batch's calls of one node kind that go as they are: through the upstream caller (shared in
   * flight with other requests, the rest as one upstream batch). Each answer is recorded, settled
   * as a single call's is (CallForwarder.settle: a full node's pruned state retried on an archive
   * node); a call the node's answer skipped joins `alone` to go by itself.
   */
  async #sendGroup(ctx: DispatchContext, group: readonly GatewayCall[], alone: GatewayCall[], record: (r: GatewayCall, out: Answer) => void): Promise<void> {
    const replies = await this.deps.caller.batch(group)
    // One failure of one upstream batch: one error (and one log line) for all its calls.
    const errors = new Map<Error, GatewayError>()
    let retried: Promise<void>[] | undefined
    for (let k = 0; k < group.length; k++) {
      const x = group[k]
      const reply = replies[k]
      if (reply instanceof Error) {
        let e = errors.get(reply)
        if (e === undefined) {
          const hit = group.filter((_, j) => replies[j] === reply)
          e = this.forwarder.upstreamError(ctx, reply, [...new Set(hit.map((y) => y.method))].join(','), hit.length)
          errors.set(reply, e)
        }
        record(x, failed(e, x))
      } else if (reply === undefined) alone.push(x)
      else {
        const out = this.forwarder.settle(ctx, x, reply)
        if (!(out instanceof Promise)) record(x, out)
        else
          (retried ??= []).push(
            out.then(
              (a) => record(x, a),
              (err: unknown) => record(x, failed(this.forwarder.upstreamError(ctx, err, x.method), x)),
            ),
          )
      }
    }
    if (retried !== undefined) await Promise.all(retried)
  }
}

/**
 * Charge the batch's calls and their units to the key's rate as the transport says
 * (CallPolicy.charge), all at once: each copy counts as the call it copies.
 */
function chargeOf(ctx: DispatchContext, charge: CallCharge, routed: readonly GatewayCall[], copies: readonly Copy[]): Charged {
  const sum: CallsByKind = { full: 0, archive: 0, fullUnits: 0, archiveUnits: 0 }
  for (const r of routed) addCall(sum, r)
  for (const c of copies) addCall(sum, c.of)
  return charge(ctx, sum)
}

/** One call (or a copy of it) into what a charge counts: a call of its node kind, and its units. */
function addCall(sum: CallsByKind, r: GatewayCall): void {
  if (r.kind === 'full') {
    sum.full++
    sum.fullUnits += r.units
  } else {
    sum.archive++
    sum.archiveUnits += r.units
  }
}

/** What the answered calls of one node kind used. */
interface KindUsed {
  calls: number
  errors: number
  bytes: number
  units: number
}

/** The one place usage is counted: one record for what a message's calls of one node kind used. */
function meter(usage: UsageSink, ctx: DispatchContext, kind: NodeKind, s: Readonly<KindUsed>, bytesIn: number): void {
  usage.served({
    accountId: ctx.key.account.accountId,
    keyId: ctx.key.record.keyId,
    network: ctx.network,
    kind,
    calls: s.calls,
    errors: s.errors,
    bytesIn,
    bytesOut: s.bytes,
    units: s.units,
  })
}

/** What a message's answered calls used, by the node kind that answered them: the one place usage is counted. */
class UsageTally {
  readonly #byKind: Record<NodeKind, KindUsed> = { full: { calls: 0, errors: 0, bytes: 0, units: 0 }, archive: { calls: 0, errors: 0, bytes: 0, units: 0 } }

  /** @param invalid calls the plan already answered with a protocol error */
  constructor(public invalid: number) {}

  /** One call answered with `out` (a copy: with its own id, `bytes` long), charged `units`. */
  add(out: Answer, units: number, bytes: number): void {
    const s = this.#byKind[out.kind]
    s.calls++
    s.units += units
    if (out.isError) s.errors++
    if (out.invalid) this.invalid++
    s.bytes += bytes
  }

  /** One usage record per node kind the batch used. */
  report(usage: UsageSink, ctx: DispatchContext): void {
    let first = true
    for (const kind of NODE_KINDS) {
      const s = this.#byKind[kind]
      if (s.calls === 0) continue
      // Request bytes are counted once, with the first node kind the batch used.
      meter(usage, ctx, kind, s, first ? ctx.bytesIn : 0)
      first = false
    }
  }
}
