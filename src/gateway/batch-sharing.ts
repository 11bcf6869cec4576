import type { NodeKind } from '../core/node-kind.js'
import type { Answer } from '../upstream/answer.js'
import type { CallFor } from '../upstream/node-capacity.js'
import type { UpstreamPool } from '../upstream/pool.js'
import { isVerifiedRead } from '../verified/verified-reads.js'
import { type InflightCalls, inflightKeyOf } from './inflight.js'
import type { UpstreamCall } from './upstream-call.js'

/** A call of a client batch for UpstreamCaller.batch, with its params already written as JSON. */
export interface SharedBatchCall {
  readonly call: { readonly method: string; readonly params: unknown; readonly idJson: string | undefined }
  readonly paramsJson: string
}

/** What sharing a batch's calls needs of the caller. */
export interface BatchSharingDeps {
  readonly inflight: InflightCalls
  /** Time-out of one attempt of an ordinary call, now (a reload changes it). */
  timeoutMs(): number
  /** One call shared in flight as any single call (its heavy slot taken only when it goes to a node). */
  shared(c: UpstreamCall, send: () => Promise<Answer>): Promise<Answer>
  /** One call of the method table's own class to the pool. */
  send(c: UpstreamCall): Promise<Answer>
}

/**
 * The most calls of one node kind in a batch that are shared in flight one by one (see shareBatch):
 * a batch's usual reads (chain id, block number, gas price, a few balances) are shared; a batch of
 * many distinct calls goes to the node as it is.
 */
const SHARED_BATCH_MAX = 8

/**
 * Calls of a client batch that go to `kind` as they are (UpstreamCaller.sentAsIs), shared in
 * flight as single calls are: one identical to a call in flight (another client's, alone or in a
 * batch) joins it; the rest go to one node as ONE upstream batch, whose calls are in flight under
 * their keys until it answers, so that other requests join them. Fifty clients sending batches that
 * hold the same eth_blockNumber cost the node one call. The batch's own copies were merged by the dispatcher.
 * @returns per call: the node's answer with the call's id, undefined (the node's answer did not
 *   cover it, or the network proves it: send it alone), or the failure that answered it
 */
export async function shareBatch(
  deps: BatchSharingDeps,
  network: string,
  pool: UpstreamPool,
  kind: NodeKind,
  calls: ReadonlyArray<SharedBatchCall>,
  account?: CallFor,
): Promise<Array<Answer | Error | undefined>> {
  const timeoutMs = deps.timeoutMs()
  // Many distinct calls: an in-flight key each (a string of the params, hashed, looked up, set
  // and deleted) cost a batch of 50 distinct eth_getBalance a fifth of its throughput (bench
  // batch-distinct), for calls that rarely meet their twin in flight. As they are.
  // A network that proves nothing (the default) is not asked per call.
  if (calls.length > SHARED_BATCH_MAX && (pool.verify === 'off' || !calls.some((c) => isVerifiedRead(c.call.method, pool.verify)))) {
    return unsharedBatch(pool, kind, calls, timeoutMs, account)
  }
  const out = new Array<Answer | Error | undefined>(calls.length)
  const joined: Array<{ index: number; answer: Promise<Answer> }> = []
  const sent: Array<{ method: string; params: unknown; paramsJson: string; clientIdJson: string }> = []
  const sentIndex: number[] = []
  const sentKeys: string[] = []
  for (let i = 0; i < calls.length; i++) {
    const { call, paramsJson: pj } = calls[i]
    // Proven one by one (the caller's verified class): out[i] stays undefined, so the dispatcher sends it alone.
    if (isVerifiedRead(call.method, pool.verify)) continue
    const idJson = call.idJson ?? 'null'
    const key = inflightKeyOf(network, kind, call.method, pj)
    if (deps.inflight.has(key)) {
      const c: UpstreamCall = { network, pool, kind, method: call.method, params: call.params, idJson, account }
      joined.push({ index: i, answer: deps.inflight.run(key, idJson, () => deps.send(c)) })
      continue
    }
    sent.push({ method: call.method, params: call.params, paramsJson: pj, clientIdJson: idJson })
    sentIndex.push(i)
    sentKeys.push(key)
  }
  if (sent.length === 1) {
    // One call is sent as one (no batch around it), shared in flight as any single call.
    const c: UpstreamCall = { network, pool, kind, method: sent[0].method, params: sent[0].params, idJson: sent[0].clientIdJson, account }
    joined.push({ index: sentIndex[0], answer: deps.shared(c, () => deps.send(c)) })
  } else if (sent.length > 1) {
    const answers = pool.callBatch(kind, sent, { timeoutMs, account })
    deps.inflight.shareBatch(sentKeys, answers)
    try {
      const replies = await answers
      for (let k = 0; k < sent.length; k++) out[sentIndex[k]] = replies[k]
    } catch (err) {
      const e = asError(err)
      for (const i of sentIndex) out[i] = e
    }
  }
  for (const { index, answer } of joined) {
    try {
      out[index] = await answer
    } catch (err) {
      out[index] = asError(err)
    }
  }
  return out
}

/**
 * Calls of a client batch to one node as ONE upstream batch, nothing shared in flight: per call
 * the answer, undefined (the node's answer did not cover it), or the failure of the whole batch.
 */
async function unsharedBatch(
  pool: UpstreamPool,
  kind: NodeKind,
  calls: ReadonlyArray<SharedBatchCall>,
  timeoutMs: number,
  account?: CallFor,
): Promise<Array<Answer | Error | undefined>> {
  try {
    return await pool.callBatch(
      kind,
      calls.map((c) => ({ method: c.call.method, params: c.call.params, paramsJson: c.paramsJson, clientIdJson: c.call.idJson ?? 'null' })),
      { timeoutMs, account },
    )
  } catch (err) {
    const e = asError(err)
    return calls.map(() => e)
  }
}

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err))
}
