import type { NodeKind } from '../core/node-kind.js'
import { isUpstreamFailure, MalformedResponse, UpstreamTransportError } from './errors.js'
import { NodeHealth, type NodeHealthOptions, type OutReason } from './health.js'
import { HttpTransport } from './http-transport.js'
import { LatencyWindow } from './latency-window.js'
import { sampleOf } from './answer-shape.js'
import { batchText, readResponseHead, readResponseHeadBytes, splitBatchHeads, type BatchCall } from './json-rpc-wire.js'
import { Answer } from './answer.js'
import { MethodsLacking } from './methods-lacking.js'
import { isListedMethod, undecidedOverWs } from './method-missing.js'
import { nodeErrorOf } from './node-error.js'
import { WsTransport, type WsTransportOptions } from './ws-transport.js'
import { CallCoalescer, type CallCoalescerOptions } from './call-coalescer.js'
import type { CallFor, NodeCapacity } from './node-capacity.js'

export interface UpstreamNodeOptions {
  name: string
  kind: NodeKind
  /** HTTP JSON-RPC URL. */
  url: string
  /** WebSocket URL, when the node offers one: calls prefer it while it is open. */
  wsUrl?: string
  /** undici Pool sockets (default 16). */
  connections?: number
  /** HTTP requests in flight per socket (default 1). */
  pipelining?: number
  health?: NodeHealthOptions
  ws?: Omit<WsTransportOptions, 'name'>
  /**
   * Single calls over HTTP in one turn of the event loop go as one JSON-RPC batch (default true;
   * see CallCoalescer); false: one request per call. Options for tests.
   */
  coalesce?: boolean | CallCoalescerOptions
  /** Largest answer read from the node, in bytes (limits.maxUpstreamBytes; default 32 MiB). */
  maxAnswerBytes?: number
  /**
   * Told of each failure counted against the node (`method` undefined: the node's WebSocket sent
   * garbage and was dropped), e.g. to log which node did what. Only failures call it.
   */
  onFailure?: (err: UpstreamTransportError, method: string | undefined) => void
  /** Told the duration of each successful call, in ms (for /metrics). */
  onDuration?: (method: string, ms: number) => void
  /** How long a method the node said it lacks is set aside on it (default METHOD_SET_ASIDE_MS). */
  methodSetAsideMs?: number
  /** At most this many client calls at once (upstreams[].maxInFlight, see NodeCapacity); undefined: no limit. */
  capacity?: NodeCapacity
}

/**
 * A call as a node reads it: its method and params, and what the node's capacity and latency
 * windows need. The pool hands on the call it was given (src/upstream/pool-call.ts PoolCall, the
 * gateway's GatewayCall): nothing is made per attempt.
 */
export interface NodeCall {
  readonly method: string
  readonly params: unknown
  /** The account it is for: it takes a slot of the node's capacity (undefined: the gateway's own call, not counted). */
  readonly account?: CallFor
  /** A heavy call (method table `heavy`): its latency goes to heavyLatency. */
  readonly heavy?: boolean
  /**
   * Sent in a request of its own, never in an upstream batch with other calls (CallCoalescer): the
   * gateway's own polls, so that a node that holds one of them holds no client's call with it.
   */
  readonly alone?: boolean
}

/** The params of the question that decides anvil's undecided WebSocket answer (#decidedOverHttp). */
const NO_PARAMS: readonly unknown[] = Object.freeze([])

/** Answers at least this large are kept as bytes (see Answer); smaller ones become text. */
const KEEP_BYTES_MIN = 16 * 1024

/** Counters for /metrics. */
export interface NodeCounters {
  calls: number
  /** Transport failures and time-outs (JSON-RPC errors are answers, not failures). */
  failures: number
  wsCalls: number
  httpCalls: number
}

/**
 * One node of a network: calls go over its WebSocket while that is open and not backed up, over
 * HTTP otherwise; consecutive transport failures take it out for a while (see NodeHealth).
 */
export class UpstreamNode {
  readonly name: string
  readonly kind: NodeKind
  readonly url: string
  readonly http: HttpTransport
  readonly ws?: WsTransport
  /** Carries the calls that go over HTTP (alone or several in one batch). */
  readonly #coalescer: CallCoalescer
  readonly counters: NodeCounters = { calls: 0, failures: 0, wsCalls: 0, httpCalls: 0 }
  /** Batches of single calls sent over HTTP and the calls they carried (for /metrics). */
  get coalesced(): Readonly<{ batches: number; batchedCalls: number }> {
    return this.#coalescer.counters
  }
  /**
   * Highest head block the node has shown: at the head monitor's polls, and in its own answers to
   * eth_blockNumber (sawHead); undefined before the first.
   */
  head: number | undefined
  /** Methods the node said it does not serve, set aside for a while (see MethodsLacking). */
  readonly lacking: MethodsLacking
  readonly #health: NodeHealth
  /** Latencies of successful ordinary calls (hedging waits for a node's p95 before asking another). */
  readonly latency = new LatencyWindow()
  /**
   * Latencies of successful heavy calls (method table `heavy`: traces, eth_getLogs, block
   * receipts), apart: a node busy with traces answers balances as fast as ever, and a trace's
   * second on one node must not make it look slow for balances, nor a fast balance make it look
   * fast for traces. See scoreOf.
   */
  readonly heavyLatency = new LatencyWindow()
  readonly #onFailure: ((err: UpstreamTransportError, method: string | undefined) => void) | undefined
  readonly #onDuration: ((method: string, ms: number) => void) | undefined
  /** The node's slots for client calls (upstreams[].maxInFlight), undefined when it has no limit. */
  readonly capacity: NodeCapacity | undefined
  #nextId = 1
  #inFlight = 0

  constructor(opts: UpstreamNodeOptions) {
    this.name = opts.name
    this.kind = opts.kind
    this.url = opts.url
    this.http = new HttpTransport(opts.url, { name: opts.name, connections: opts.connections, pipelining: opts.pipelining, maxBytes: opts.maxAnswerBytes })
    if (opts.wsUrl !== undefined) {
      this.ws = new WsTransport(opts.wsUrl, { maxMessageBytes: opts.maxAnswerBytes, ...opts.ws, name: opts.name })
      if (opts.onFailure) this.ws.onGarbage = (err) => opts.onFailure!(err, undefined)
    }
    this.#coalescer = new CallCoalescer(this.http, opts.coalesce === false ? { maxCalls: 1 } : opts.coalesce === true ? {} : opts.coalesce)
    this.#health = new NodeHealth(opts.health)
    this.lacking = new MethodsLacking(opts.methodSetAsideMs, opts.health?.clock)
    this.#onFailure = opts.onFailure
    this.#onDuration = opts.onDuration
    this.capacity = opts.capacity
  }

  /** A call of `account` would be sent at once (no limit, or a free slot for it). */
  hasRoom(account: CallFor | undefined): boolean {
    return this.capacity === undefined || account === undefined || this.capacity.hasRoom(account)
  }

  /**
   * Send one call and resolve with the node's answer (our id in it: see Answer.withId). A JSON-RPC error is an answer.
   * @throws UpstreamTransportError / UpstreamTimeout (counted against the node's health)
   */
  call(c: NodeCall, timeoutMs: number): Promise<Answer> {
    const capacity = this.capacity
    const account = c.account
    const heavy = c.heavy === true
    const alone = c.alone === true
    if (capacity === undefined || account === undefined) return this.#call(c.method, c.params, timeoutMs, heavy, alone)
    return this.#withSlot(capacity, account, timeoutMs, (left) => this.#call(c.method, c.params, left, heavy, alone))
  }

  /**
   * `send` in a slot of the node's capacity for `account`: at once when one is free, else after
   * waiting for one (at most capacity.waitMs, and never past the call's own time-out, which the
   * wait uses up). @throws NodeBusy when no slot came in time
   */
  async #withSlot<T>(capacity: NodeCapacity, account: CallFor, timeoutMs: number, send: (timeoutMs: number) => Promise<T>): Promise<T> {
    const waiting = capacity.acquire(account, Math.min(capacity.waitMs, timeoutMs - 1))
    let left = timeoutMs
    if (waiting !== undefined) {
      const since = performance.now()
      await waiting
      left = Math.max(1, timeoutMs - (performance.now() - since))
    }
    try {
      return await send(left)
    } finally {
      capacity.release(account)
    }
  }

  async #call(method: string, params: unknown, timeoutMs: number, heavy: boolean, alone: boolean): Promise<Answer> {
    this.#health.begin()
    this.counters.calls++
    this.#inFlight++
    const started = performance.now()
    try {
      let answer: Buffer | string
      let overWs = false
      if (this.ws?.canSend()) {
        this.counters.wsCalls++
        overWs = true
        answer = await this.ws.callBytes(method, params, timeoutMs)
      } else {
        this.counters.httpCalls++
        answer = await this.#coalescer.call(method, params, timeoutMs, alone)
      }
      // Small answers become text at once: splicing a short string costs less than byte buffers
      // (the bench's small calls measured it); large ones stay bytes all the way to the client.
      let reply: Answer
      if (typeof answer === 'string' || answer.length < KEEP_BYTES_MIN) {
        const text = typeof answer === 'string' ? answer : answer.toString('utf8')
        reply = Answer.ofText(text, readHead(this.name, text).isError, this.name, this.kind)
      } else {
        reply = Answer.ofBytes([answer], readHead(this.name, answer).isError, this.name, this.kind)
      }
      if (overWs && reply.isError && isListedMethod(method) && undecidedOverWs(reply)) reply = await this.#decidedOverHttp(method, reply, timeoutMs)
      const ms = performance.now() - started
      ;(heavy ? this.heavyLatency : this.latency).record(ms)
      this.#onDuration?.(method, ms)
      this.#health.succeeded()
      return reply
    } catch (err) {
      if (isUpstreamFailure(err)) this.#failed(err, method)
      throw err
    } finally {
      this.#inFlight--
    }
  }

  /**
   * anvil's WebSocket answered as it does both for a method it lacks and for params it cannot read
   * (see undecidedOverWs): the same node is asked over HTTP for the method with no params, where it
   * answers -32601 only for a method it lacks. Its -32601 is then this call's answer (the node's
   * own word for "not found", which the pool learns from); any other answer leaves the WebSocket's.
   * One small call more, only for this one answer of one client's nodes, and only for table methods
   * (a name outside the table is never sent again on its own).
   */
  async #decidedOverHttp(method: string, undecided: Answer, timeoutMs: number): Promise<Answer> {
    const raw = await this.#coalescer.call(method, NO_PARAMS, timeoutMs)
    const text = typeof raw === 'string' ? raw : raw.toString('utf8')
    const overHttp = Answer.ofText(text, readHead(this.name, text).isError, this.name, this.kind)
    return nodeErrorOf(overHttp)?.code === -32601 ? overHttp : undecided
  }

  /**
   * Send calls as one JSON-RPC batch (one WebSocket frame or one HTTP request) and resolve with
   * each call's answer, in the order of `calls`; undefined for a call the node's array did not
   * answer, and all undefined when the node answered the batch with something else than an
   * array (some nodes refuse batches, or batches that large, with one error object): the caller
   * then sends those calls one by one.
   * @throws UpstreamTransportError / UpstreamTimeout (counted against the node's health)
   */
  callBatch(calls: ReadonlyArray<BatchCall>, timeoutMs: number, account?: CallFor): Promise<Array<Answer | undefined>> {
    const capacity = this.capacity
    // A batch takes one slot: the node answers it as one request.
    if (capacity === undefined || account === undefined) return this.#callBatch(calls, timeoutMs)
    return this.#withSlot(capacity, account, timeoutMs, (left) => this.#callBatch(calls, left))
  }

  async #callBatch(calls: ReadonlyArray<BatchCall>, timeoutMs: number): Promise<Array<Answer | undefined>> {
    this.#health.begin()
    this.counters.calls += calls.length
    this.#inFlight += calls.length
    try {
      let answer: { text: string; firstId: number }
      if (this.ws?.canSend()) {
        this.counters.wsCalls += calls.length
        answer = await this.ws.callBatch(calls, timeoutMs)
      } else {
        this.counters.httpCalls += calls.length
        const firstId = this.#nextId
        this.#nextId += calls.length
        answer = { text: await this.http.call(batchText(calls, firstId), timeoutMs), firstId }
      }
      const out = new Array<Answer | undefined>(calls.length)
      // An unreadable element is left out: its call goes again on its own.
      for (const item of splitBatchHeads(answer.text) ?? []) {
        const index = typeof item.id === 'number' ? item.id - answer.firstId : -1
        if (index >= 0 && index < calls.length) out[index] = Answer.ofText(item.text, item.isError, this.name, this.kind, item.idSpan)
      }
      this.#health.succeeded()
      return out
    } catch (err) {
      if (isUpstreamFailure(err)) this.#failed(err, calls.length === 1 ? calls[0].method : `a batch of ${calls.length} calls`)
      throw err
    } finally {
      this.#inFlight -= calls.length
    }
  }

  #failed(err: UpstreamTransportError, method: string): void {
    this.counters.failures++
    this.#health.failed()
    this.#onFailure?.(err, method)
  }

  /** New health bounds from a reloaded config (see NodeHealth.retune); the node keeps its state and sockets. */
  retune(health: NodeHealthOptions, methodSetAsideMs: number | undefined): void {
    this.#health.retune(health)
    if (methodSetAsideMs !== undefined) this.lacking.setAsideMs = methodSetAsideMs
  }

  /** May calls be sent here now (see NodeHealth.available). */
  healthy(): boolean {
    return this.#health.available()
  }

  /** Up, not out nor on probation (for /metrics: see NodeHealth.up). */
  up(): boolean {
    return this.#health.up()
  }

  /** Out, its cooldown over, waiting for or running the probe that may let it in (see NodeHealth.halfOpen). */
  halfOpen(): boolean {
    return this.#health.halfOpen()
  }

  /** Calls that probed it while it was out, since start. */
  probes(): number {
    return this.#health.probes
  }

  /** Why the node is out (failures, error rate, behind), undefined while up. */
  outReason(): OutReason | undefined {
    return this.#health.outReason()
  }

  /** Take no call for `ms`: it answered against consensus too often (see NodeHealth.sitOut). */
  sitOut(ms: number): void {
    this.#health.sitOut(ms)
  }

  /** Share of failed calls among its last calls. */
  errorRate(): number {
    return this.#health.errorRate()
  }

  /** The head monitor's measure of this node: its head and how far it is behind the best node. */
  observeHead(head: number, lag: number): void {
    this.head = head
    this.#health.observeLag(lag)
  }

  /** A head the node showed in an answer (eth_blockNumber): a newer one than the last poll's counts at once. */
  sawHead(head: number): void {
    if (this.head === undefined || head > this.head) this.head = head
  }

  /** Blocks behind the best node of the network at the last head poll. */
  lag(): number | undefined {
    return this.#health.lag()
  }

  /** Calls sent and not yet answered. */
  inFlight(): number {
    return this.#inFlight
  }

  async close(): Promise<void> {
    await Promise.all([this.http.close(), this.ws?.close()])
  }
}

/** An answer whose head cannot be read is a broken answer, a failure like a reset connection. */
function readHead(node: string, answer: Buffer | string): { isError: boolean } {
  try {
    return typeof answer === 'string' ? readResponseHead(answer) : readResponseHeadBytes(answer)
  } catch (err) {
    if (err instanceof MalformedResponse) {
      const bytes = typeof answer === 'string' ? Buffer.from(answer.slice(0, 120)) : answer
      throw new UpstreamTransportError('an answer that is not a JSON-RPC object', { node, requestSent: true, cause: err, sample: sampleOf(bytes) })
    }
    throw err
  }
}
