import type { NodeKind } from '../core/node-kind.js'
import { Answer } from '../upstream/answer.js'
import type { UpstreamPool, PoolCallOptions } from '../upstream/pool.js'
import type { CallFor } from '../upstream/node-capacity.js'
import { spliceId } from '../upstream/json-rpc-wire.js'
import { METHODS } from '../rpc/method-table.js'
import { cacheRuleFor, isFinal, mayBeFinal, type CacheRule } from '../cache/cache-rules.js'
import type { ImmutableCache } from '../cache/immutable-cache.js'
import { GetLogs } from '../get-logs/get-logs.js'
import type { GetLogsLimits } from '../get-logs/logs-range.js'
import { TransactionSender } from '../upstream/send-transaction.js'
import { InflightCalls, inflightKey, inflightKeyOf } from './inflight.js'
import type { HeavySlot } from './heavy-calls.js'
import { paramsJson } from '../rpc/params-json.js'
import { EvmWorkers } from '../verified/evm-workers.js'
import type { EvmLimits } from '../verified/proven-run.js'
import { isVerifiedRead, VerifiedReads } from '../verified/verified-reads.js'

/** One call routed to a node kind, on its way upstream. */
export interface UpstreamCall {
  readonly network: string
  readonly pool: UpstreamPool
  readonly kind: NodeKind
  readonly method: string
  readonly params: unknown
  /** The client's id as JSON text. */
  readonly idJson: string
  /** Pinned to this node (a filter lives there): sent as is, never shared nor cached. */
  readonly node?: string
  /** The newest block the call names, when it names one: it goes to a node whose head reaches it. */
  readonly minBlock?: number
  /** The account it is for: its turn on nodes with a capacity (PoolCallOptions.account). */
  readonly account?: CallFor
  /**
   * A heavy call's place among its key's heavy calls at once (src/gateway/heavy-calls.ts): taken
   * only when the call goes to a node, not when the cache answers it or it joins one in flight.
   */
  readonly heavy?: HeavySlot
}

/** A call of a client batch for UpstreamCaller.batch, with its params already written as JSON. */
export interface BatchedCall {
  readonly call: { readonly method: string; readonly params: unknown; readonly idJson: string | undefined }
  readonly paramsJson: string
}

/** The answer, and whether it came from the cache (`X-Tollgate-Cache`); undefined: not cacheable. */
export interface UpstreamCallerOptions {
  /** Time-out of one attempt of an ordinary call (limits.upstreamTimeoutMs). */
  timeoutMs: number
  heavy: {
    /** Time-out of a heavy call (method table `heavy`), which is also its whole budget. */
    timeoutMs: number
    /** Per-method time-outs, overriding `timeoutMs`. */
    methodTimeoutMs: Readonly<Record<string, number>>
    getLogs: GetLogsLimits
  }
  hedge: { enabled: boolean; minDelayMs: number; maxDelayMs: number }
  cache?: ImmutableCache
  /** The finalized block of a network (undefined until known: nothing is cached as final). */
  finalized?: (network: string) => number | undefined
  /** The gateway's EVM for verified calls (the config's `evm`; absent: its defaults). */
  evm?: { gasCap: number; timeoutMs: number; workers: number }
}

/** The config's `evm` defaults (schemas/config.ts), for callers made without a config. */
const EVM_DEFAULTS = { gasCap: 50_000_000, timeoutMs: 5_000, workers: 2 }

/**
 * The most calls of one node kind in a batch that are shared in flight one by one (see batch()):
 * a batch's usual reads (chain id, block number, gas price, a few balances) are shared; a batch of
 * many distinct calls goes to the node as it is.
 */
const SHARED_BATCH_MAX = 8

/**
 * Sends routed calls upstream, with what makes heavy traffic cheap and failures invisible:
 * answers that can no longer change come from the LMDB cache; identical calls in flight are sent
 * once; wide eth_getLogs ranges are split; heavy calls get their own time-out; reads may be
 * hedged; eth_sendRawTransaction is sent so that an accepted transaction is never reported as
 * failed. The pool underneath fails over between nodes of the kind.
 * @example
 * const out = await caller.call({ network: 'eth-1', pool, kind: 'full', method: 'eth_getBlockByNumber', params: ['0x10', false], idJson: '1' })
 * out.cache // 'hit' once block 16 is final and was asked before
 */
export class UpstreamCaller {
  readonly inflight = new InflightCalls()
  readonly logs: GetLogs
  readonly transactions = new TransactionSender()
  /** Each network's proven state reads (networks.<slug>.verify: reads), made at its first; a reload keeps the pool and these. */
  readonly #verified = new WeakMap<UpstreamPool, VerifiedReads>()
  /** Verified calls' EVM runs: one pool of worker threads for every network (threads start at the first run). */
  readonly evm: EvmLimits

  constructor(private opts: UpstreamCallerOptions) {
    this.logs = new GetLogs(opts.heavy.getLogs)
    const evm = opts.evm ?? EVM_DEFAULTS
    this.evm = { runner: new EvmWorkers({ size: evm.workers, timeoutMs: evm.timeoutMs }), gasCap: BigInt(evm.gasCap) }
  }

  /** A reload's time-out of ordinary calls and hedging, for the calls that start from now on. */
  retune(timeoutMs: number, hedge: UpstreamCallerOptions['hedge']): void {
    this.opts = { ...this.opts, timeoutMs, hedge }
  }

  /**
   * A call this caller would send to the pool as it is: no cache rule, not heavy, not eth_getLogs
   * (split), eth_sendRawTransaction or a filter call. The dispatcher may carry such calls of a
   * client batch to a node in one upstream batch (bench/README.md); the others come here one by one.
   */
  sentAsIs(method: string, params: unknown): boolean {
    const spec = METHODS[method]
    if (spec === undefined || spec.filter !== undefined || spec.heavy === true || spec.path !== undefined) return false
    if (this.opts.heavy.methodTimeoutMs[method] !== undefined) return false
    return this.opts.cache === undefined || cacheRuleFor(method, params) === undefined
  }

  /**
   * Calls of a client batch that go to `kind` as they are (sentAsIs), shared in flight as single
   * calls are: one identical to a call in flight (another client's, alone or in a batch) joins it;
   * the rest go to one node as ONE upstream batch, whose calls are in flight under their keys until
   * it answers, so that other requests join them. Fifty clients sending batches that hold the same
   * eth_blockNumber cost the node one call. The batch's own copies were merged by the dispatcher.
   * @returns per call: the node's answer with the call's id, undefined (the node's answer did not
   *   cover it: send it alone), or the failure that answered it
   */
  async batch(
    network: string,
    pool: UpstreamPool,
    kind: NodeKind,
    calls: ReadonlyArray<BatchedCall>,
    account?: CallFor,
  ): Promise<Array<Answer | Error | undefined>> {
    // Many distinct calls: an in-flight key each (a string of the params, hashed, looked up, set
    // and deleted) cost a batch of 50 distinct eth_getBalance a fifth of its throughput (bench
    // batch-distinct), for calls that rarely meet their twin in flight. As they are.
    // A network that proves nothing (the default) is not asked per call.
    if (calls.length > SHARED_BATCH_MAX && (pool.verify === 'off' || !calls.some((c) => verifies(pool, c.call.method)))) {
      return sendAsOneBatch(pool, kind, calls, this.opts.timeoutMs, account)
    }
    const out = new Array<Answer | Error | undefined>(calls.length)
    const joined: Array<{ index: number; answer: Promise<Answer> }> = []
    const sent: Array<{ method: string; params: unknown; paramsJson: string; clientIdJson: string }> = []
    const sentIndex: number[] = []
    const sentKeys: string[] = []
    for (let i = 0; i < calls.length; i++) {
      const { call, paramsJson: pj } = calls[i]
      // Proven one by one (#send): out[i] stays undefined, so the dispatcher sends it alone.
      if (verifies(pool, call.method)) continue
      const idJson = call.idJson ?? 'null'
      const key = inflightKeyOf(network, kind, call.method, pj)
      if (this.inflight.has(key)) {
        const c: UpstreamCall = { network, pool, kind, method: call.method, params: call.params, idJson, account }
        joined.push({ index: i, answer: this.inflight.run(key, idJson, () => this.#send(c)) })
        continue
      }
      sent.push({ method: call.method, params: call.params, paramsJson: pj, clientIdJson: idJson })
      sentIndex.push(i)
      sentKeys.push(key)
    }
    if (sent.length === 1) {
      // One call is sent as one (no batch around it), shared in flight as any single call.
      const c: UpstreamCall = { network, pool, kind, method: sent[0].method, params: sent[0].params, idJson: sent[0].clientIdJson, account }
      joined.push({ index: sentIndex[0], answer: this.#shared(c, () => this.#send(c)) })
    } else if (sent.length > 1) {
      const answers = pool.callBatch(kind, sent, { timeoutMs: this.opts.timeoutMs, account })
      this.inflight.shareBatch(sentKeys, answers)
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

  // Not async: each path returns its own promise (one promise fewer per call).
  call(c: UpstreamCall): Promise<Answer> {
    const spec = METHODS[c.method]
    if (spec === undefined) {
      // Not in the method table, forwarded by the network's forwardMethods: as it is (MethodSpec.unlisted),
      // and heavy: one of its key's heavy calls at once and the heavy time-out, or 40 unlisted
      // traces of one key would all be at the node at once, past the bound listed traces keep.
      const timeoutMs = this.#timeoutOf(c.method)
      const send = () => c.pool.call(c.kind, c.method, c.params, c.idJson, { timeoutMs, deadlineMs: timeoutMs, account: c.account, heavy: true })
      return c.heavy === undefined ? send() : c.heavy.run(send)
    }
    // Pinned or stateful (filters): exactly what the client asked, to exactly that node.
    if (c.node !== undefined || spec?.filter !== undefined) return this.#send(c)
    if (spec?.path === 'send') {
      return this.#shared(c, () => this.transactions.send(c.pool, c.kind, c.params, c.idJson, this.#timeoutOf(c.method)))
    }
    if (spec?.path === 'logs') {
      // One slot for the whole call, however many parts it is split in: its parts and tag lookups take none.
      const plain: UpstreamCall = c.heavy === undefined ? c : { ...c, heavy: undefined }
      const logs = () =>
        this.logs.call(c.params, c.idJson, c.kind, {
          fetch: (params, idJson) => this.#cached({ ...plain, params, idJson }),
          resolveTag: (tag) => this.#resolveTag(plain, tag),
        })
      return c.heavy === undefined ? logs() : c.heavy.run(logs)
    }
    return this.#cached(c)
  }

  /**
   * The cached answer of a call when it is final and stored, at once (synchronous), or undefined.
   * A batch serves its cached calls with this before anything goes upstream: the async path per
   * call cost more than the lookup itself.
   */
  cachedNow(network: string, kind: NodeKind, method: string, params: unknown, idJson: string): Answer | undefined {
    const cache = this.opts.cache
    if (cache === undefined) return undefined
    const spec = METHODS[method]
    if (spec?.filter !== undefined || spec?.path !== undefined) return undefined
    const rule = cacheRuleFor(method, params)
    if (rule === undefined || !mayBeFinal(rule, this.opts.finalized?.(network))) return undefined
    const hit = cache.get(network, cache.generation(network), `${kind}\0${method}\0${paramsJson(params)}`)
    return hit === undefined ? undefined : cacheHit(hit, idJson, kind)
  }

  /** From the cache when final and stored; else shared in flight, and stored when final. */
  async #cached(c: UpstreamCall): Promise<Answer> {
    const cache = this.opts.cache
    const rule = cache === undefined ? undefined : cacheRuleFor(c.method, c.params)
    if (cache === undefined || rule === undefined) return this.#shared(c, () => this.#send(c))
    // Cacheable in time but not final yet (above the finalized block): asked upstream, never stored.
    if (!mayBeFinal(rule, this.opts.finalized?.(c.network))) return missed(await this.#shared(c, () => this.#send(c)))
    const generation = cache.generation(c.network)
    // By node kind too: what a full node answered is not served as an archive node's answer.
    const callText = `${c.kind}\0${c.method}\0${paramsJson(c.params)}`
    const hit = cache.get(c.network, generation, callText)
    if (hit !== undefined) return cacheHit(hit, c.idJson, c.kind)
    const reply = await this.#shared(c, async () => {
      const r = await this.#send(c)
      if (!r.isError) this.#store(c, rule, generation, callText, r.text)
      return r
    })
    return missed(reply)
  }

  /** Store an answer if it is final now, and no reorg dropped the generation it was read under. */
  #store(c: UpstreamCall, rule: CacheRule, generation: number, callText: string, body: string): void {
    const cache = this.opts.cache!
    let result: unknown
    if (rule.final === 'result') {
      try {
        result = (JSON.parse(body) as { result?: unknown }).result
      } catch {
        return
      }
    } else {
      // Only presence matters here: a null answer (no such block) is short, so look only there.
      result = body.length < 200 && /"result"\s*:\s*null/.test(body) ? null : true
    }
    if (!isFinal(rule, result, this.opts.finalized?.(c.network))) return
    if (cache.generation(c.network) !== generation) return
    cache.put(c.network, generation, callText, body)
  }

  #shared(c: UpstreamCall, send: () => Promise<Answer>): Promise<Answer> {
    const key = inflightKey(c.network, c.kind, c.method, c.params)
    // A heavy call joining an identical one in flight costs the node nothing: only one that goes
    // to the node takes a slot of its key's heavy calls at once (and may wait for it, or be refused).
    if (c.heavy !== undefined && !this.inflight.has(key)) return c.heavy.run(() => this.inflight.run(key, c.idJson, send))
    return this.inflight.run(key, c.idJson, send)
  }

  #send(c: UpstreamCall): Promise<Answer> {
    const spec = METHODS[c.method]
    const timeoutMs = this.#timeoutOf(c.method)
    const opts: PoolCallOptions = { timeoutMs, node: c.node, minBlock: c.minBlock, account: c.account }
    // A heavy call that timed out on one node would most likely time out on the next: its
    // time-out is its whole budget (a fast failure, a refused connection, still fails over).
    if (spec?.heavy === true) {
      opts.deadlineMs = timeoutMs
      // Looked up once here: the pool scores, and the node times, heavy calls apart.
      opts.heavy = true
    }
    // Only reads are hedged or probe a node: a filter made twice, a transaction sent twice, are not the same call.
    else if (c.node === undefined && spec?.filter === undefined && spec?.path !== 'send') {
      opts.read = true
      if (this.opts.hedge.enabled) opts.hedge = this.opts.hedge
    }
    // Heavy ones too (eth_getBlockReceipts): checked as they come back.
    if (c.node === undefined && verifies(c.pool, c.method)) return this.verifiedReads(c.pool).call(c.kind, c.method, c.params, c.idJson, opts)
    return c.pool.call(c.kind, c.method, c.params, c.idJson, opts)
  }

  /** The network's proven reads (made at its first, kept with the pool), over one set of trusted headers. */
  verifiedReads(pool: UpstreamPool): VerifiedReads {
    let reads = this.#verified.get(pool)
    if (reads === undefined) {
      reads = new VerifiedReads(pool, { timeoutMs: this.opts.timeoutMs, evm: this.evm })
      this.#verified.set(pool, reads)
    }
    return reads
  }

  /** A method's own time-out, else the heavy one for heavy methods and those not in the table (forwarded: heavy too). */
  #timeoutOf(method: string): number {
    const own = this.opts.heavy.methodTimeoutMs[method]
    if (own !== undefined) return own
    const spec = METHODS[method]
    return spec === undefined || spec.heavy === true ? this.opts.heavy.timeoutMs : this.opts.timeoutMs
  }

  /** A block tag's number now, asked of the node kind the call goes to (shared in flight). */
  async #resolveTag(c: UpstreamCall, tag: string): Promise<number | undefined> {
    try {
      if (tag === 'latest' || tag === 'pending') {
        const r = await this.#shared({ ...c, method: 'eth_blockNumber', params: [], idJson: '0' }, () =>
          this.#send({ ...c, method: 'eth_blockNumber', params: [], idJson: '0' }),
        )
        const m = /"result"\s*:\s*"(0x[0-9a-fA-F]+)"/.exec(r.text)
        return m ? parseInt(m[1], 16) : undefined
      }
      const params = [tag, false]
      const r = await this.#shared({ ...c, method: 'eth_getBlockByNumber', params, idJson: '0' }, () =>
        this.#send({ ...c, method: 'eth_getBlockByNumber', params, idJson: '0' }),
      )
      const number = (JSON.parse(r.text) as { result?: { number?: string } | null }).result?.number
      return typeof number === 'string' ? parseInt(number, 16) : undefined
    } catch {
      return undefined
    }
  }
}

/**
 * Calls of a client batch to one node as ONE upstream batch, nothing shared in flight: per call
 * the answer, undefined (the node's answer did not cover it), or the failure of the whole batch.
 */
async function sendAsOneBatch(
  pool: UpstreamPool,
  kind: NodeKind,
  calls: ReadonlyArray<BatchedCall>,
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

/** A call the network proves (networks.<slug>.verify: reads) rather than sends as it is. */
function verifies(pool: UpstreamPool, method: string): boolean {
  return isVerifiedRead(method, pool.verify)
}

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err))
}

/** A stored answer for this client: the cache's text with its id. */
function cacheHit(text: string, idJson: string, kind: NodeKind): Answer {
  const a = Answer.ofText(spliceId(text, idJson), false, 'cache', kind)
  a.cache = 'hit'
  return a
}

/** An answer the cache could keep but did not have (the X-Tollgate-Cache: miss header). */
function missed(answer: Answer): Answer {
  answer.cache = 'miss'
  return answer
}
