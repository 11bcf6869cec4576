import type { Answer } from '../upstream/answer.js'
import type { PoolCallOptions, UpstreamPool } from '../upstream/pool.js'
import { isVerifiedRead } from '../verified-reads/verified-reads.js'
import type { GatewayCall } from './gateway-call.js'
import { type InflightCalls, inflightKeyOf } from './inflight.js'

/** What sharing a batch's calls needs of the caller. */
export interface BatchSharingDeps {
  readonly inflight: InflightCalls
  /** One call shared in flight as any single call (its heavy slot taken only when it goes to a node). */
  shared(c: GatewayCall, send: () => Promise<Answer>): Promise<Answer>
  /** One call of the method table's own class to the pool. */
  send(c: GatewayCall): Promise<Answer>
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
export async function shareBatch(deps: BatchSharingDeps, calls: ReadonlyArray<GatewayCall>): Promise<Array<Answer | Error | undefined>> {
  // The calls of one client batch to one node kind: one network, pool, account and budget (sentAsIs: none heavy, none with a time-out of its own).
  const { network, pool, kind } = calls[0]
  const budget: PoolCallOptions = { timeoutMs: calls[0].timeoutMs, account: calls[0].account }
  // Many distinct calls: an in-flight key each (a string of the params, hashed, looked up, set
  // and deleted) cost a batch of 50 distinct eth_getBalance a fifth of its throughput (bench
  // batch-distinct), for calls that rarely meet their twin in flight. As they are.
  // A network that proves nothing (the default) is not asked per call.
  if (calls.length > SHARED_BATCH_MAX && (pool.verify === 'off' || !calls.some((c) => isVerifiedRead(c.method, pool.verify)))) {
    return unsharedBatch(pool, kind, calls, budget)
  }
  const out = new Array<Answer | Error | undefined>(calls.length)
  const joined: Array<{ index: number; answer: Promise<Answer> }> = []
  const sent: GatewayCall[] = []
  const sentIndex: number[] = []
  const sentKeys: string[] = []
  for (let i = 0; i < calls.length; i++) {
    const c = calls[i]
    // Proven one by one (the caller's verified class): out[i] stays undefined, so the dispatcher sends it alone.
    if (isVerifiedRead(c.method, pool.verify)) continue
    const key = inflightKeyOf(network, kind, c.method, c.paramsJson)
    if (deps.inflight.has(key)) {
      joined.push({ index: i, answer: deps.inflight.run(key, c.idJson, () => deps.send(c)) })
      continue
    }
    sent.push(c)
    sentIndex.push(i)
    sentKeys.push(key)
  }
  if (sent.length === 1) {
    // One call is sent as one (no batch around it), shared in flight as any single call.
    const c = sent[0]
    joined.push({ index: sentIndex[0], answer: deps.shared(c, () => deps.send(c)) })
  } else if (sent.length > 1) {
    const answers = pool.callBatch(kind, sent, budget)
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
  kind: GatewayCall['kind'],
  calls: ReadonlyArray<GatewayCall>,
  budget: PoolCallOptions,
): Promise<Array<Answer | Error | undefined>> {
  try {
    return await pool.callBatch(kind, calls, budget)
  } catch (err) {
    const e = asError(err)
    return calls.map(() => e)
  }
}

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err))
}
