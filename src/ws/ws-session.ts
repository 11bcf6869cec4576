import type { Clock } from '../../actors/runtime/clock.js'
import type { WsDecision } from '../../actors/key/ws-limits.js'
import type { WsConfig } from '../config/types.js'
import type { NodeKind } from '../core/node-kind.js'
import { ERRORS, GatewayError, errorResponseJson } from '../errors/registry.js'
import type { CallPolicy, DispatchContext, LocalAnswer, LocalCalls } from '../gateway/dispatch-context.js'
import type { RpcDispatcher } from '../gateway/rpc-dispatcher.js'
import type { KeyContext } from '../gateway/key-directory.js'
import type { Admission, Admitted } from '../gateway/admission.js'
import type { IpDirectory } from '../gateway/ip-directory.js'
import { gatewayErrorFor } from '../gateway/upstream-failure.js'
import { METHODS } from '../rpc/method-table.js'
import { isInvalid, parseRpcBytes, type ParsedBody, type RpcCall } from '../rpc/parse.js'
import { spliceId } from '../upstream/json-rpc-wire.js'
import type { UsageMeter } from '../usage/usage-meter.js'
import type { WebSocket } from '../front/uws.js'
import type { SubscriptionHub, SubscriptionSink } from './subscription-hub.js'
import { logsFilterRefusal } from './logs-filter-refusal.js'
import { parseSubscribe } from './subscription-request.js'
import type { WsCloseCause, WsCounters } from './ws-counters.js'
import { notificationUnits, type NotificationBudgets } from './notification-budget.js'
import type { WsDecisions } from './ws-decisions.js'

/** The user data uWS keeps with each socket. */
export interface WsUserData {
  session: WsSession
}

export interface WsSessionDeps {
  admission: Admission
  ips: IpDirectory
  dispatcher: RpcDispatcher
  /** How its calls are handled: the WebSocket method rules, their charge, malformed ones counted (WsServer.calls). */
  calls: CallPolicy
  usage: UsageMeter
  decisions: WsDecisions
  counters: WsCounters
  config: WsConfig
  clock: Clock
  /** Each account's notification units per second, across its connections (ws.notificationUnitsPerSecond). */
  notifications: NotificationBudgets
  onError: (err: unknown) => void
}

/** Close codes the gateway uses (docs/websocket.md). */
export const CLOSE = Object.freeze({
  /** Policy violation: a slow consumer, or a key that stopped being valid. */
  POLICY: 1008,
  /** The gateway is shutting down. */
  GOING_AWAY: 1001,
})

/** What uWS's `send` returns: sent, queued under backpressure (still sent), or dropped past its ceiling. */
const SEND = Object.freeze({ SENT: 1, BACKPRESSURE: 0, DROPPED: 2 } as const)
/** Not a uWS status: our own bound (ws.maxBufferedBytes) was over before the send. */
const OVER_OUR_BOUND = 3
type SendStatus = (typeof SEND)[keyof typeof SEND] | typeof OVER_OUR_BOUND

/** Notifications held for a subscription whose id the client has not been sent yet. */
const MAX_HELD = 16

interface ClientSub {
  /** The answer carrying this id was sent: notifications may flow. */
  ready: boolean
  held: string[]
  /** The node kind the held notifications came from (what they are charged as). */
  heldKind: NodeKind
}

/**
 * One client's WebSocket connection: every message is admitted by the key's actor (the
 * key's messages per second across its connections, and its penalty), then handled by the
 * same RpcDispatcher as HTTP, with eth_subscribe and eth_unsubscribe answered here from the
 * network's SubscriptionHub. Answers and notifications go through one send path that enforces
 * the slow-consumer bound.
 */
export class WsSession implements SubscriptionSink {
  readonly key: KeyContext
  readonly network: string
  readonly #admitted: Admitted
  readonly #hub: SubscriptionHub
  readonly #ip: string
  readonly #ipOf = (): string => this.#ip
  /** eth_subscribe and eth_unsubscribe, which the dispatcher hands back (the subscription ids come back in its answer). */
  readonly #local: LocalCalls = {
    call: (call, idJson) => (METHODS[call.method]?.local === 'subscribe' ? this.subscribe(call, idJson) : Promise.resolve(this.unsubscribe(call, idJson))),
  }
  readonly #deps: WsSessionDeps
  readonly #subs = new Map<string, ClientSub>()
  #socket: WebSocket<WsUserData> | undefined
  #closed = false
  #closeCause: WsCloseCause | undefined
  /** eth_subscribe calls waiting for the node: they count towards the per-connection limit too. */
  #subscribing = 0
  /** Messages waiting for the end of this loop turn (see send); undefined when none. */
  #queued: string[] | undefined
  /**
   * This turn's notifications queued and not yet accounted (#account, once per connection per
   * turn): counted per copy in three numbers, so that the usage meter and the plan's units are
   * asked once per batch rather than once per copy (a key string and a bucket per copy before).
   */
  #notified = 0
  #notifiedBytes = 0
  #notifiedUnits = 0
  #notifiedKind: NodeKind = 'full'

  constructor(admitted: Admitted, hub: SubscriptionHub, ip: string, deps: WsSessionDeps) {
    this.key = admitted.key
    this.network = admitted.network
    this.#admitted = admitted
    this.#hub = hub
    this.#ip = ip
    this.#deps = deps
  }

  /** The key whose subscriptions these are (the hub counts distinct logs filters per key). */
  get owner(): string {
    return this.key.record.keyId
  }

  /** The key's account (its keys' distinct logs filters are counted together too). */
  get account(): string {
    return this.key.record.accountId
  }

  get isClosed(): boolean {
    return this.#closed
  }

  /** The client's address (for the IP throttle). */
  get ip(): string {
    return this.#ip
  }

  get subscriptions(): number {
    return this.#subs.size
  }

  opened(socket: WebSocket<WsUserData>): void {
    this.#socket = socket
    this.#deps.counters.opened(this.network)
    this.#deps.notifications.open(this.account)
  }

  /** A message from the client. `data` is valid only until this returns (uWS neuters it). */
  message(data: ArrayBuffer): void {
    if (this.#closed) return
    // No larger than ws.maxMessageBytes: uWS refuses a larger one at its header (ws-server.ts).
    const bytes = data.byteLength
    if (!this.recheck()) return
    // A message past the key's limit with no answer left is dropped unread: a flood is not
    // parsed to be thrown away. It counts as one call (what it holds is not known).
    if (this.key.actor.wsDropsUnread()) return this.#dropped(1)
    // Parsing copies what it keeps out of uWS's buffer before anything asynchronous happens.
    // A text frame is valid UTF-8 (uWS checks); a binary one is checked here.
    const parsed = parseRpcBytes(Buffer.from(data))
    const calls = this.#deps.dispatcher.costOf(parsed)
    const decision = this.key.actor.ws({ type: 'WsMessage', calls })
    if (decision.type === 'WsMessageRejected') return this.#refuse(parsed, calls, decision)
    this.#deps.counters.message(this.network, 'served')
    const ctx: DispatchContext = {
      key: this.key,
      // Looked up per message (recheck): a plan or node selection changed meanwhile applies at once.
      access: this.#admitted.access,
      network: this.network,
      pool: this.#admitted.pool,
      bytesIn: bytes,
      ip: this.#ipOf,
      policy: this.#deps.calls,
      local: this.#local,
    }
    this.#deps.dispatcher.dispatch(ctx, parsed).then(
      (answer) => {
        // Sent at the end of this loop turn with the connection's other answers of the turn.
        let body = answer.body
        // The whole message refused by its charge (compute units per second): one error per call,
        // each with its id, as the session's own refusals are (a client waits for its ids).
        if (answer.refusal !== undefined) body = errorsFor(parsed, answer.refusal.rpc, answer.refusal.message, undefined)
        if (body !== null) this.send(typeof body === 'string' ? body : body.text, true)
        // Only now does the client know these ids: notifications held for them may follow.
        if (answer.subscribed !== undefined) for (const id of answer.subscribed) this.#arm(id)
        if (answer.malformed) {
          this.#noteBad(answer.malformed)
          this.#deps.admission.refusedCalls(this.#ipOf, answer.malformed)
        }
      },
      (err: unknown) => {
        this.#deps.onError(err)
        const e = new GatewayError('INTERNAL_ERROR', undefined, { cause: err })
        this.send(errorResponseJson('null', e.rpc, e.message))
      },
    )
  }

  /** A notification for client subscription `id` (called by the hub, `text` carries `id`). */
  notify(id: string, text: string, kind: NodeKind): void {
    const sub = this.#subs.get(id)
    if (sub === undefined || this.#closed) return
    if (!sub.ready) {
      if (sub.held.length < MAX_HELD) {
        sub.held.push(text)
        sub.heldKind = kind
      }
      return
    }
    this.#deliver(text, kind)
  }

  /**
   * One notification copy: each copy delivered costs its units, duplicates of one filter included
   * (docs/costs.md), within the account's notification budget and the plan's units per second
   * where the plan sets one; past either the connection is closed with 1008 (docs/websocket.md).
   * It goes out at the end of the turn with the connection's other messages, in one write: a
   * connection with 100 copies of one log made 100 system calls.
   */
  #deliver(text: string, kind: NodeKind): void {
    if (this.#closed) return
    if (kind !== this.#notifiedKind) {
      this.#account()
      this.#notifiedKind = kind
    }
    const units = notificationUnits(text.length)
    if (!this.#deps.notifications.spend(this.account, units)) {
      const perSecond = this.#deps.config.notificationUnitsPerSecond
      return this.end(CLOSE.POLICY, `Notification budget: over ${perSecond} units/s (1 per 25 bytes); subscribe once per filter`, 'notification-budget')
    }
    // This turn's copies are taken from the plan's units at the end of the turn (#account): they count already.
    if (this.key.actor.unitsLeft(kind) - this.#notifiedUnits < units) {
      const limits = this.key.actor.state.limits
      const perSecond = kind === 'full' ? limits.fullUnits : limits.archiveUnits
      return this.end(
        CLOSE.POLICY,
        `Notification budget: the plan's ${perSecond} units/s on ${kind} nodes are spent; subscribe once per filter`,
        'notification-budget',
      )
    }
    this.#notified++
    this.#notifiedBytes += text.length
    this.#notifiedUnits += units
    this.send(text, true)
    // What waits for the end of the turn is held in memory: past the slow-consumer bound's worth,
    // it is written now, so that the bound applies within a turn too (a turn may carry many of
    // the node's notifications, each fanned out to every copy).
    if (this.#notifiedBytes > this.#deps.config.maxBufferedBytes) this.flush()
  }

  /**
   * This turn's notifications counted: in the usage events (NotificationsRecorded) and against
   * the plan's units per second (shared with the fleet as calls' units are). Called before they
   * are written, so a batch cut short by the slow-consumer bound is charged whole (one turn's).
   */
  #account(): void {
    const n = this.#notified
    if (n === 0) return
    const units = this.#notifiedUnits
    this.#deps.usage.notified(this.key.account.accountId, this.key.record.keyId, this.network, this.#notifiedKind, n, this.#notifiedBytes, units)
    this.key.actor.notified(this.#notifiedKind, units)
    this.#notified = 0
    this.#notifiedBytes = 0
    this.#notifiedUnits = 0
  }

  /**
   * Send one message. A client that lets more than ws.maxBufferedBytes pile up unread is
   * disconnected with a reason instead: buffering without bound would let one slow client eat
   * the gateway's memory, and silently skipping its notifications would leave it believing it
   * saw every block. The bound is checked before each send, so one large answer to a client
   * with an empty buffer always goes out whole.
   *
   * `later`: queue it, to go out at the end of this event-loop turn with the connection's other
   * messages of the turn, in one write (see OutgoingTurn). A client with several calls in flight
   * has its answers resolved together when the node's answers arrive together (in-flight sharing
   * resolves every copy of a call at once): one system call per message was the largest cost of
   * a WebSocket call (bench/README.md). A message sent while others wait joins them, in order.
   */
  send(text: string, later = false): boolean {
    if (this.#closed || this.#socket === undefined) return false
    if (this.#queued !== undefined) {
      this.#queued.push(text)
      return true
    }
    if (later) {
      this.#queued = [text]
      outgoing.add(this)
      return true
    }
    return this.#write([text])
  }

  /** Write what waits for the end of the turn (OutgoingTurn calls it; end() too, before closing). */
  flush(): void {
    const queued = this.#queued
    if (queued === undefined) return
    this.#queued = undefined
    this.#account()
    this.#write(queued)
  }

  /** Write messages in one cork (one system call), the slow-consumer bound checked before each. */
  #write(texts: readonly string[]): boolean {
    const socket = this.#socket
    if (this.#closed || socket === undefined) return false
    const max = this.#deps.config.maxBufferedBytes
    let status = SEND.SENT as SendStatus
    socket.cork(() => {
      for (let i = 0; i < texts.length && status !== SEND.DROPPED; i++) {
        if (socket.getBufferedAmount() > max) {
          status = OVER_OUR_BOUND
          break
        }
        status = socket.send(texts[i], false) as SendStatus
      }
    })
    if (status === OVER_OUR_BOUND) {
      this.end(CLOSE.POLICY, `Slow consumer: over ${max} bytes unread; read faster`, 'slow-consumer')
      return false
    }
    // Dropped by uWS's own backpressure ceiling (set far above ours; a safety net).
    if (status === SEND.DROPPED) {
      this.end(CLOSE.POLICY, 'Slow consumer: message dropped; read faster', 'slow-consumer')
      return false
    }
    return true
  }

  /** Close with a code and a reason (uWS then calls closed() at once). */
  end(code: number, reason: string, cause: WsCloseCause): void {
    if (this.#closed || this.#socket === undefined) return
    // Answers already decided go first (a shutdown's 1001 follows the answers of the calls it waited for).
    if (cause !== 'slow-consumer') this.flush()
    if (this.#closed || this.#socket === undefined) return
    this.#closeCause = cause
    // A close reason is at most 123 bytes (RFC 6455, 5.5).
    this.#socket.end(code, Buffer.from(reason).subarray(0, 123))
  }

  /**
   * The connection is gone (uWS close handler): end its subscriptions and free its slot. `code`
   * 1006 without a close of ours: the peer vanished, or stayed silent past idleTimeout.
   */
  closed(code = 1000, uwsCause?: WsCloseCause): void {
    if (this.#closed) return
    this.#closed = true
    // Queued and never written (a slow consumer, a peer gone): not delivered, not charged.
    this.#queued = undefined
    this.#notified = this.#notifiedBytes = this.#notifiedUnits = 0
    if (this.#closeCause === undefined && code === 1006) this.#closeCause = uwsCause ?? 'idle-or-error'
    for (const id of this.#subs.keys()) this.#hub.unsubscribe(id, this)
    this.#subs.clear()
    this.key.actor.ws({ type: 'WsDisconnect' })
    if (this.#socket !== undefined) this.#deps.notifications.close(this.account)
    this.#deps.counters.closed(this.network, this.#closeCause ?? 'client')
    this.#socket = undefined
  }

  /**
   * Pass the admission again (each message, and every second for open connections): the key not
   * revoked, the plan active, some node allowed. False when the connection was closed for it.
   */
  recheck(): boolean {
    const refused = this.#deps.admission.recheck(this.#admitted)
    if (refused === undefined) return true
    this.end(CLOSE.POLICY, refused.message, 'key-invalid')
    return false
  }

  /** eth_subscribe: join or open the shared subscription; the answer carries the client's own id. */
  async subscribe(call: RpcCall, idJson: string): Promise<LocalAnswer> {
    const max = this.#deps.config.maxSubscriptionsPerConnection
    // Subscriptions still being made count: a client sending 1,000 eth_subscribe at once must
    // not get them all because none had been answered when the next was checked.
    const held = this.#subs.size + this.#subscribing
    if (held >= max) {
      const message = `Too many subscriptions: this connection holds ${held}, at most ${max} are allowed per connection (ws.maxSubscriptionsPerConnection); unsubscribe some, or open another connection`
      return { body: errorResponseJson(idJson, ERRORS.WS_TOO_MANY_SUBSCRIPTIONS.rpc, message), isError: true, malformed: false }
    }
    const check = parseSubscribe(call.params)
    if (!check.ok) return { body: errorResponseJson(idJson, ERRORS.INVALID_PARAMS.rpc, check.message), isError: true, malformed: true }
    this.#subscribing++
    let result: Awaited<ReturnType<SubscriptionHub['subscribe']>>
    try {
      result = await this.#hub.subscribe(check.request, this)
    } finally {
      this.#subscribing--
    }
    if (result.ok) {
      if (this.#closed) {
        // The client left while the node answered: nobody will unsubscribe it otherwise.
        this.#hub.unsubscribe(result.id, this)
      } else {
        this.#subs.set(result.id, { ready: false, held: [], heldKind: 'full' })
        return { body: `{"jsonrpc":"2.0","id":${idJson},"result":"${result.id}"}`, isError: false, malformed: false, subscribed: result.id }
      }
      return { body: `{"jsonrpc":"2.0","id":${idJson},"result":"${result.id}"}`, isError: false, malformed: false }
    }
    if ('nodeAnswer' in result) return { body: spliceId(result.nodeAnswer, idJson), isError: true, malformed: true }
    if (result.failure === 'logs-filters') {
      const message = logsFilterRefusal(this.network, result.limit, result.held, result.max)
      return { body: errorResponseJson(idJson, ERRORS.WS_TOO_MANY_LOGS_FILTERS.rpc, message), isError: true, malformed: false }
    }
    const e =
      result.failure === 'no-node'
        ? new GatewayError('NO_HEALTHY_UPSTREAM', `No node with a WebSocket is reachable for ${this.network} subscriptions right now; retry with backoff`)
        : gatewayErrorFor(result.cause, this.network)
    return { body: errorResponseJson(idJson, e.rpc, e.message), isError: true, malformed: false, failure: e }
  }

  /** eth_unsubscribe: true when this connection had that subscription, false otherwise (as nodes answer). */
  unsubscribe(call: RpcCall, idJson: string): LocalAnswer {
    const params = call.params
    const id = Array.isArray(params) && params.length === 1 ? params[0] : undefined
    if (typeof id !== 'string') {
      return {
        body: errorResponseJson(idJson, ERRORS.INVALID_PARAMS.rpc, 'Invalid params: eth_unsubscribe takes [subscriptionId]'),
        isError: true,
        malformed: true,
      }
    }
    const had = this.#subs.delete(id) && this.#hub.unsubscribe(id, this)
    return { body: `{"jsonrpc":"2.0","id":${idJson},"result":${had}}`, isError: false, malformed: false }
  }

  #arm(id: string): void {
    const sub = this.#subs.get(id)
    if (sub === undefined || sub.ready) return
    sub.ready = true
    const held = sub.held
    sub.held = []
    for (const text of held) this.#deliver(text, sub.heldKind)
  }

  #noteBad(count: number): void {
    const d = this.key.actor.ws({ type: 'WsBadMessages', count })
    if (d.type === 'WsPenaltyStarted') this.#deps.decisions.penaltyImposed(this.#scope(), d)
  }

  /** A message the key's limits refuse: throttled (answered -32005), penalised (answered), or dropped. */
  #refuse(parsed: ParsedBody, calls: number, d: Extract<WsDecision, { type: 'WsMessageRejected' }>): void {
    if (d.reason === 'ws-messages-dropped') return this.#dropped(calls)
    this.#deps.decisions.limited(this.#scope(), d.reason, calls)
    let code: number
    let message: string
    if (d.reason === 'ws-messages-throttled') {
      this.#deps.counters.message(this.network, 'throttled')
      // A client IP that keeps exceeding its limits is throttled, whatever the transport.
      this.#deps.ips.rejected(this.#ip, calls)
      code = ERRORS.RATE_LIMITED.rpc
      message = `Rate limit exceeded: this key may send ${d.limit} messages per second over WebSocket (each call of a batch counts); retry after ${d.retryAfterMs} ms, with exponential backoff`
    } else {
      this.#deps.counters.message(this.network, 'penalized')
      code = ERRORS.WS_PENALIZED.rpc
      message = `Messages refused until ${new Date(d.until).toISOString()} (${Math.ceil(d.retryAfterMs / 1000)} s): this key sent repeated malformed or unsupported messages`
    }
    const data = { retryAfterMs: d.retryAfterMs }
    const body = errorsFor(parsed, code, message, data)
    if (body !== null) this.send(body)
  }

  /** A message dropped unanswered: over the key's limit, and its throttle answers spent too. */
  #dropped(calls: number): void {
    this.#deps.decisions.limited(this.#scope(), 'ws-messages-dropped', calls)
    this.#deps.counters.message(this.network, 'dropped')
  }

  #scope() {
    return { accountId: this.key.account.accountId, keyId: this.key.record.keyId, network: this.network }
  }
}

/** One error per call of a refused message, each with its call's id (null for a parse error). */
function errorsFor(parsed: ParsedBody, code: number, message: string, data: unknown): string | null {
  switch (parsed.kind) {
    case 'parse-error':
    case 'empty-batch':
      return errorResponseJson('null', code, message, data)
    case 'single': {
      const e = parsed.entry
      if (!isInvalid(e) && e.idJson === undefined) return null
      return errorResponseJson(e.idJson ?? 'null', code, message, data)
    }
    case 'batch': {
      const parts: string[] = []
      for (const e of parsed.entries) {
        if (!isInvalid(e) && e.idJson === undefined) continue
        parts.push(errorResponseJson(e.idJson ?? 'null', code, message, data))
      }
      return parts.length === 0 ? null : `[${parts.join(',')}]`
    }
  }
}

/**
 * The sessions with messages waiting, written once per event-loop turn: setImmediate runs after
 * the turn's I/O callbacks (uWS's and the upstream sockets') and the promise reactions they
 * started, so every answer decided in the turn goes out in it, each connection's in one write.
 */
class OutgoingTurn {
  readonly #sessions = new Set<WsSession>()
  #scheduled = false

  add(session: WsSession): void {
    this.#sessions.add(session)
    if (this.#scheduled) return
    this.#scheduled = true
    setImmediate(this.#flush)
  }

  readonly #flush = (): void => {
    this.#scheduled = false
    for (const session of this.#sessions) session.flush()
    this.#sessions.clear()
  }
}

const outgoing = new OutgoingTurn()
