import type { Clock } from '../../actors/runtime/clock.js'
import type { WsDecision } from '../../actors/account/ws-limits.js'
import type { WsConfig } from '../config/types.js'
import type { NodeKind } from '../core/node-kind.js'
import { closing, type Closing } from '../errors/close-reasons.js'
import { MESSAGES } from '../errors/messages.js'
import { ERRORS, GatewayError, errorResponseJson } from '../errors/registry.js'
import type { DispatchContext } from '../gateway/dispatch-context.js'
import type { RpcDispatcher } from '../gateway/rpc-dispatcher.js'
import type { KeyContext } from '../gateway/key-directory.js'
import type { Admission, Admitted } from '../gateway/admission.js'
import type { IpDirectory } from '../gateway/ip-directory.js'
import { isInvalid, parseRpcBytes, type ParsedBody } from '../rpc/parse.js'
import type { UsageMeter } from '../usage/usage-meter.js'
import type { WebSocket } from '../front/uws.js'
import { ConnectionSubscriptions } from './connection-subscriptions.js'
import type { NotificationBudgets } from './notification-budget.js'
import { NotificationCharge } from './notification-charge.js'
import { OutgoingTurn } from './outgoing-turn.js'
import type { SubscriptionHub } from './subscription-hub.js'
import type { WsCloseCause, WsCounters } from './ws-counters.js'
import type { WsDecisions } from './ws-decisions.js'

/** The user data uWS keeps with each socket. */
export interface WsUserData {
  session: WsSession
}

export interface WsSessionDeps {
  admission: Admission
  ips: IpDirectory
  dispatcher: RpcDispatcher
  usage: UsageMeter
  decisions: WsDecisions
  counters: WsCounters
  config: WsConfig
  clock: Clock
  /** Each account's notification units per second, across its connections (ws.notificationUnitsPerSecond). */
  notifications: NotificationBudgets
  onError: (err: unknown) => void
}

/**
 * One client's WebSocket connection: every message is admitted by the key's actor (the
 * key's messages per second across its connections, and its penalty), then handled by the
 * same RpcDispatcher as HTTP, with eth_subscribe and eth_unsubscribe answered by the
 * connection's subscriptions on the network's SubscriptionHub. Answers and notifications go out
 * through the connection's OutgoingTurn, which enforces the slow-consumer bound.
 */
export class WsSession {
  readonly key: KeyContext
  readonly network: string
  readonly #admitted: Admitted
  readonly #ip: string
  readonly #ipOf = (): string => this.#ip
  /** Its subscriptions: eth_subscribe and eth_unsubscribe, which the dispatcher hands back as local calls. */
  readonly #subs: ConnectionSubscriptions
  readonly #deps: WsSessionDeps
  #socket: WebSocket<WsUserData> | undefined
  /** What goes out this event-loop turn: from opened() to closed(). */
  #turn: OutgoingTurn | undefined
  #closed = false
  #closeCause: WsCloseCause | undefined

  constructor(admitted: Admitted, hub: SubscriptionHub, ip: string, deps: WsSessionDeps) {
    this.key = admitted.key
    this.network = admitted.network
    this.#admitted = admitted
    this.#ip = ip
    this.#deps = deps
    this.#subs = new ConnectionSubscriptions(admitted.key, {
      hub,
      network: admitted.network,
      config: deps.config,
      deliver: (text, kind) => this.#deliver(text, kind),
    })
  }

  /** The key's account (its notification budget is the account's). */
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
    const charge = new NotificationCharge(this.key, this.network, this.#deps)
    this.#turn = new OutgoingTurn(socket, {
      config: this.#deps.config,
      charge,
      violated: (close) => this.end(close),
    })
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
      transport: 'ws',
      token: this.#admitted.token?.narrowing,
      local: this.#subs,
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
        if (answer.subscribed !== undefined) for (const id of answer.subscribed) this.#subs.arm(id)
        if (answer.invalid) {
          this.#noteBad(answer.invalid)
          this.#deps.admission.refusedCalls(this.#ipOf, answer.invalid)
        }
      },
      (err: unknown) => {
        this.#deps.onError(err)
        const e = new GatewayError('INTERNAL_ERROR', undefined, { cause: err })
        this.send(errorResponseJson('null', e.rpc, e.message))
      },
    )
  }

  /**
   * Send one message; `later`: with the connection's other messages of this event-loop turn, in
   * one write at its end (OutgoingTurn, which also holds the slow-consumer bound).
   */
  send(text: string, later = false): boolean {
    if (this.#closed || this.#turn === undefined) return false
    return this.#turn.send(text, later)
  }

  /** A notification copy for the client (from its subscriptions): charged, then sent with the turn. */
  #deliver(text: string, kind: NodeKind): void {
    if (this.#closed || this.#turn === undefined) return
    this.#turn.notify(text, kind)
  }

  /** Close with a code and a reason of CLOSE_REASONS (uWS then calls closed() at once). */
  end({ code, reason, cause }: Closing): void {
    if (this.#closed || this.#socket === undefined) return
    // Answers already decided go first (a shutdown's 1001 follows the answers of the calls it waited for).
    if (cause !== 'slow-consumer') this.#turn?.flush()
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
    this.#turn?.close()
    this.#turn = undefined
    if (this.#closeCause === undefined && code === 1006) this.#closeCause = uwsCause ?? 'idle-or-error'
    this.#subs.close()
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
    this.end(closing('ACCESS_WITHDRAWN', { refusal: refused }))
    return false
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
      message = MESSAGES.KEY_WS_MESSAGES_PER_SECOND.text({ limit: d.limit, retryAfterMs: d.retryAfterMs })
    } else {
      this.#deps.counters.message(this.network, 'penalized')
      code = ERRORS.WS_PENALIZED.rpc
      message = MESSAGES.WS_MESSAGES_PENALIZED.text({ until: d.until, retryAfterMs: d.retryAfterMs })
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
