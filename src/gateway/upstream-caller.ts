import type { Answer } from '../upstream/answer.js'
import { METHODS } from '../rpc/method-table.js'
import { paramsJson } from '../rpc/params-json.js'
import type { UpstreamPool } from '../upstream/pool.js'
import { CacheStep } from '../cache/cache-step.js'
import type { ImmutableCache } from '../cache/immutable-cache.js'
import { GetLogs } from '../get-logs/get-logs.js'
import { logsPath } from '../get-logs/logs-path.js'
import type { GetLogsLimits } from '../get-logs/logs-range.js'
import { TransactionSender } from '../upstream/send-transaction.js'
import type { EvmLimits } from '../verified-reads/proven-run.js'
import { isVerifiedRead, type VerifiedReads } from '../verified-reads/verified-reads.js'
import { VerifiedRegistry } from '../verified-reads/verified-registry.js'
import { shareBatch, type BatchSharingDeps } from './batch-sharing.js'
import { classify, type CallClass } from './call-class.js'
import { CallSender } from './call-sender.js'
import type { CallBudget, GatewayCall } from './gateway-call.js'
import { InflightCalls, inflightKeyOf } from './inflight.js'

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

/**
 * Sends routed calls upstream, with what makes heavy traffic cheap and failures invisible. Each
 * call is classified once (src/gateway/call-class.ts) and handed to its class's handler: answers
 * that can no longer change come from the LMDB cache (src/cache/cache-step.ts); identical calls in
 * flight are sent once (inflight.ts); wide eth_getLogs ranges are split (src/get-logs/logs-path.ts);
 * eth_sendRawTransaction is sent so that an accepted transaction is never reported as failed;
 * verified reads are proven (src/verified-reads/verified-registry.ts); heavy calls get their own time-out
 * and reads may be hedged (call-sender.ts). The pool underneath fails over between nodes of the kind.
 * @example
 * const out = await caller.call(gatewayCall) // a GatewayCall of eth_getBlockByNumber ['0x10', false]
 * out.cache // 'hit' once block 16 is final and was asked before
 */
export class UpstreamCaller {
  readonly inflight = new InflightCalls()
  readonly logs: GetLogs
  readonly transactions = new TransactionSender()
  readonly #cache: CacheStep
  readonly #sender: CallSender
  /** Each network's proven state reads (networks.<slug>.verify: reads), made at its first; a reload keeps the pool and these. */
  readonly #verified: VerifiedRegistry
  /** Made once: the cache step's way to share a call in flight, without a closure per call. */
  readonly #share = (c: GatewayCall, send: () => Promise<Answer>): Promise<Answer> => this.#shared(c, send)
  /** What a client batch's calls shared in flight need (batch-sharing.ts): they are of the table's own class, never proven there. */
  readonly #batchDeps: BatchSharingDeps = {
    inflight: this.inflight,
    shared: this.#share,
    send: (c) => this.#sender.send(c, 'table'),
  }

  constructor(opts: UpstreamCallerOptions) {
    this.logs = new GetLogs(opts.heavy.getLogs)
    this.#cache = new CacheStep(opts.cache, opts.finalized)
    this.#verified = new VerifiedRegistry({ timeoutMs: opts.timeoutMs, evm: opts.evm })
    this.#sender = new CallSender(
      { timeoutMs: opts.timeoutMs, heavyTimeoutMs: opts.heavy.timeoutMs, methodTimeoutMs: opts.heavy.methodTimeoutMs, hedge: opts.hedge },
      this.#verified,
    )
  }

  /** Verified calls' EVM runs: one pool of worker threads for every network (threads start at the first run). */
  get evm(): EvmLimits {
    return this.#verified.evm
  }

  /** A reload's time-out of ordinary calls, hedging and EVM bounds, for the calls that start from now on. */
  apply(next: Pick<UpstreamCallerOptions, 'timeoutMs' | 'hedge'> & { evm: { gasCap: number; timeoutMs: number } }): void {
    this.#verified.apply({ timeoutMs: next.timeoutMs, evm: next.evm })
    this.#sender.retune(next.timeoutMs, next.hedge)
  }

  /**
   * A call this caller would send to the pool as it is: no cache rule, not heavy, not eth_getLogs
   * (split), eth_sendRawTransaction or a filter call. The dispatcher may carry such calls of a
   * client batch to a node in one upstream batch (bench/README.md); the others come here one by one.
   */
  sentAsIs(c: GatewayCall): boolean {
    const spec = METHODS[c.method]
    if (spec === undefined || spec.filter !== undefined || spec.heavy === true || spec.path !== undefined) return false
    if (this.#sender.hasOwnTimeout(c.method)) return false
    return !this.#cache.mayAnswer(c.method, c.params)
  }

  /** A method's time budget (CallSender.budgetOf): read where a call is routed, so that it travels with the call. */
  budgetOf(method: string): CallBudget {
    return this.#sender.budgetOf(method)
  }

  /**
   * Calls of a client batch that go to `kind` as they are (sentAsIs), shared in flight as single
   * calls are (see shareBatch in batch-sharing.ts).
   * @returns per call: the node's answer with the call's id, undefined (send it alone), or the failure that answered it
   */
  batch(calls: ReadonlyArray<GatewayCall>): Promise<Array<Answer | Error | undefined>> {
    return shareBatch(this.#batchDeps, calls)
  }

  // Not async: each class's handler returns its own promise (one promise fewer per call).
  call(c: GatewayCall): Promise<Answer> {
    const cls = classify(METHODS[c.method], c.node, c.pool.verify, c.method)
    switch (cls) {
      case 'unlisted':
        return this.#sender.sendUnlisted(c)
      case 'pinned':
        return this.#sender.send(c, cls)
      case 'send':
        return this.#shared(c, () => this.transactions.send(c.pool, c.kind, c.params, c.idJson, c.timeoutMs))
      case 'logs':
        return this.#logs(c)
      case 'verified':
      case 'table':
        return this.#cache.call(c, this.#share, () => this.#sender.send(c, cls))
    }
  }

  /**
   * The cached answer of a call when it is final and stored, at once (synchronous), or undefined
   * (see CacheStep.now): a batch serves its cached calls with this before anything goes upstream.
   */
  cachedNow(c: GatewayCall): Answer | undefined {
    const spec = METHODS[c.method]
    if (spec?.filter !== undefined || spec?.path !== undefined) return undefined
    return this.#cache.now(c)
  }

  /** The network's proven reads (made at its first, kept with the pool), over one set of trusted headers. */
  verifiedReads(pool: UpstreamPool): VerifiedReads {
    return this.#verified.of(pool)
  }

  /** An eth_getLogs: its parts through the cache, its tag lookups shared in flight, one heavy slot for the whole. */
  #logs(c: GatewayCall): Promise<Answer> {
    // Its parts and tag lookups take no heavy slot: the call holds one for all of them.
    const plain: GatewayCall = c.heavySlot === undefined ? c : { ...c, heavySlot: undefined }
    // Each part is sent as an eth_getLogs of the table (heavy), or proven when the network proves logs.
    const partClass: CallClass = isVerifiedRead(c.method, c.pool.verify) ? 'verified' : 'table'
    return logsPath(this.logs, c, {
      fetch: (params, idJson) => {
        const part: GatewayCall = { ...plain, params, paramsJson: paramsJson(params), idJson }
        return this.#cache.call(part, this.#share, () => this.#sender.send(part, partClass))
      },
      ask: (method, params) => {
        // Another method: its own time budget.
        const asked: GatewayCall = { ...plain, ...this.#sender.budgetOf(method), method, params, paramsJson: paramsJson(params), idJson: '0' }
        return this.#shared(asked, () => this.#sender.send(asked, classify(METHODS[method], undefined, c.pool.verify, method)))
      },
    })
  }

  #shared(c: GatewayCall, send: () => Promise<Answer>): Promise<Answer> {
    const key = inflightKeyOf(c.network, c.kind, c.method, c.paramsJson)
    // A heavy call joining an identical one in flight costs the node nothing: only one that goes
    // to the node takes a slot of its key's heavy calls at once (and may wait for it, or be refused).
    const slot = c.heavySlot
    if (slot !== undefined && !this.inflight.has(key)) return slot.run(() => this.inflight.run(key, c.idJson, send))
    return this.inflight.run(key, c.idJson, send)
  }
}
