import type { Clock } from '../../actors/runtime/clock.js'
import type { WsConfig } from '../config/types.js'
import { closing } from '../errors/close-reasons.js'
import { refusal } from '../errors/messages.js'
import { GatewayError, errorResponseJson } from '../errors/registry.js'
import { clientIp, credentialsFrom } from '../front/http-rpc-route.js'
import type { VerifiedToken } from '../gateway/token-verifier.js'
import type { KeyContext } from '../gateway/key-directory.js'
import { sendReply } from '../front/respond.js'
import { refuseAmbiguousLength, repeatedHeader } from '../front/repeated-headers.js'
import type { Exchanges } from '../front/exchanges.js'
import { getAndHead, otherMethods } from '../front/route-methods.js'
import { uws, type HttpRequest, type HttpResponse, type TemplatedApp } from '../front/uws.js'
import type { Admission, AdmissionRequest } from '../gateway/admission.js'
import type { IpDirectory } from '../gateway/ip-directory.js'
import type { RpcDispatcher } from '../gateway/rpc-dispatcher.js'
import type { UsageMeter } from '../usage/usage-meter.js'
import type { Subscriptions } from './subscriptions.js'
import type { WsCloseCause, WsCounters } from './ws-counters.js'
import { NotificationBudgets } from './notification-budget.js'
import type { WsDecisions } from './ws-decisions.js'
import { WsSession, type WsUserData } from './ws-session.js'

export interface WsServerDeps {
  /** The same admission as HTTP: network, IP throttle, key, origin, plan access, the key's pool. */
  admission: Admission
  ips: IpDirectory
  /** Take the client IP from X-Forwarded-For (behind a trusted reverse proxy). */
  trustProxy: boolean
  subscriptions: Subscriptions
  /** The calls' method rules, charge (their units: the session charged the message) and forward, as calls over WebSocket (src/gateway/call-policies.ts). */
  dispatcher: RpcDispatcher
  usage: UsageMeter
  decisions: WsDecisions
  counters: WsCounters
  config: WsConfig
  clock: Clock
  /**
   * How many of an account's connections (its key's limit `max`) this instance may hold now, when
   * it shares the key with other instances (src/fleet/fleet.ts); absent: all of them.
   */
  allowance?: (accountId: string, max: number) => number
  onError: (err: unknown) => void
}

/** uWS's own backpressure ceiling: far above ws.maxBufferedBytes, so that our close frame still fits. */
const HARD_BACKPRESSURE_FACTOR = 16

/** How often open connections are checked for a key revoked or a plan ended meanwhile. */
const KEY_CHECK_MS = 1_000

/**
 * WS /ws/<network>: the upgrade authenticates the key (`?apikey=` or `Authorization: Bearer`)
 * and asks the key's actor for a connection slot; a refusal is an HTTP answer (401, 403, 404,
 * 429) with a JSON-RPC error body, as over HTTP. Each accepted connection is a WsSession.
 */
export class WsServer {
  readonly #deps: WsServerDeps
  readonly #sessions = new Set<WsSession>()
  readonly #timer: NodeJS.Timeout
  /** Each account's notification units per second on this instance (read at start: ws is not reloaded). */
  readonly #notifications: NotificationBudgets

  constructor(deps: WsServerDeps) {
    this.#deps = deps
    this.#notifications = new NotificationBudgets(deps.config.notificationUnitsPerSecond, deps.clock)
    this.#timer = setInterval(() => this.#checkKeys(), KEY_CHECK_MS)
    this.#timer.unref()
  }

  /** Open connections. */
  get size(): number {
    return this.#sessions.size
  }

  register(app: TemplatedApp, exchanges: Exchanges): void {
    const { config } = this.#deps
    app.ws<WsUserData>('/ws/:network', {
      compression: uws.DISABLED,
      // uWS reads a frame's length before its payload. A frame (or the fragments of one message) over
      // maxPayloadLength is refused there, before any of it is buffered: uWS closes the TCP connection
      // at once, without a close frame (the client sees 1006; the close handler gets "Received too big
      // message", counted as message-too-big). The bound is the message limit itself: uWS buffers an
      // unfinished message in native memory that JavaScript never sees, and with a larger bound 40
      // connections each holding 14 MiB of an unfinished 15 MiB frame pinned half a gigabyte. With it,
      // what one connection can make the process hold is ws.maxMessageBytes, and what the process holds
      // is that times the open connections (bounded per key, ws.maxConnectionsPerKey). uWS gives no
      // way to write a 1009 close frame from that point (it closes the socket inside its parser), so
      // the bound and the 1009 of a message that arrived whole cannot both be had: the bound wins.
      maxPayloadLength: config.maxMessageBytes,
      maxBackpressure: config.maxBufferedBytes * HARD_BACKPRESSURE_FACTOR,
      closeOnBackpressureLimit: 0,
      // Pings are sent when a connection is quiet; one that answers nothing (half-open, or a
      // peer gone without a FIN) is closed after idleTimeout.
      idleTimeout: config.idleTimeoutSec,
      sendPingsAutomatically: true,
      upgrade: (res, req, context) => this.#upgrade(res, req, context, exchanges),
      open: (ws) => {
        const { session } = ws.getUserData()
        this.#sessions.add(session)
        session.opened(ws)
      },
      message: (ws, message) => {
        const { session } = ws.getUserData()
        try {
          session.message(message)
        } catch (err) {
          this.#deps.onError(err)
        }
      },
      close: (ws, code, message) => {
        const { session } = ws.getUserData()
        this.#sessions.delete(session)
        const cause = uwsCloseCause(code, message)
        // A frame uWS refused (too big, not UTF-8) is a call refused before a node, as over HTTP.
        if (cause !== undefined) this.#deps.admission.refusedCalls(() => session.ip, 1)
        session.closed(code, cause)
      },
    })
    // A GET without `Upgrade: websocket` (a browser tab, a health probe) reaches these.
    getAndHead(app, exchanges, '/ws/:network', (res, _req, state) => {
      const e = new GatewayError('UPGRADE_REQUIRED')
      sendReply(
        res,
        state,
        { status: e.http, body: errorResponseJson('null', e.rpc, e.message), headers: { Upgrade: 'websocket', Connection: 'Upgrade' } },
        false,
      )
    })
    otherMethods(app, exchanges, '/ws/:network', ['GET'])
  }

  /** Close every connection with 1001 (the gateway is shutting down). */
  close(): void {
    clearInterval(this.#timer)
    for (const session of [...this.#sessions]) session.end(closing('SHUTTING_DOWN', {}))
  }

  #upgrade(res: HttpResponse, req: HttpRequest, context: unknown, exchanges: Exchanges): void {
    // Everything is copied from `req` synchronously, before uWS frees it.
    const network = this.#deps.admission.networkOf(req.getParameter(0), 'ws')
    const repeated = repeatedHeader(req)
    if (repeated === 'content-length') return refuseAmbiguousLength(res, exchanges.begin(res))
    const credentials = credentialsFrom(req, repeated)
    const { apiKey } = credentials
    // A browser's WebSocket cannot send Authorization: its token comes as ?token= instead.
    const token = credentials.token || (req.getQuery('token') ?? '')
    const secKey = req.getHeader('sec-websocket-key')
    const protocol = req.getHeader('sec-websocket-protocol')
    const extensions = req.getHeader('sec-websocket-extensions')
    const deps = this.#deps
    const ip = clientIp(res, req, deps.trustProxy)
    const checked = token === '' ? undefined : deps.admission.checkToken(token, () => ip)
    if (!(checked instanceof Promise)) {
      // Browsers send Origin on a WebSocket upgrade as on a fetch: the key's allowlist applies.
      const origin = req.getHeader('origin')
      const referer = req.getHeader('referer')
      return this.#admitted(
        res,
        context,
        exchanges,
        { network, apiKey, origin, referer, userAgent: () => req.getHeader('user-agent'), ip: () => ip, token: checked },
        { secKey, protocol, extensions, ip },
      )
    }
    // A token not seen before: its signature is checked asynchronously, so the upgrade waits
    // (onAborted first, the upgrade corked when it comes), with what it needs copied now.
    const request = { network, apiKey, origin: req.getHeader('origin'), referer: req.getHeader('referer'), ip: () => ip }
    const userAgent = req.getHeader('user-agent')
    let aborted = false
    res.onAborted(() => {
      aborted = true
    })
    checked.then(
      (verified) => {
        if (aborted) return
        res.cork(() =>
          this.#admitted(res, context, exchanges, { ...request, userAgent: () => userAgent, token: verified }, { secKey, protocol, extensions, ip }),
        )
      },
      (err: unknown) => {
        deps.onError(err)
        if (!aborted) res.cork(() => refuse(res, exchanges, network, deps.counters, new GatewayError('INTERNAL_ERROR', undefined, { cause: err })))
      },
    )
  }

  /** The rest of an upgrade once its token (if any) is checked: admission, the key's connection limits, the session. */
  #admitted(
    res: HttpResponse,
    context: unknown,
    exchanges: Exchanges,
    request: AdmissionRequest & { token: VerifiedToken<KeyContext> | GatewayError | undefined },
    handshake: { secKey: string; protocol: string; extensions: string; ip: string },
  ): void {
    const deps = this.#deps
    const { network } = request
    const { secKey, protocol, extensions, ip } = handshake
    const admitted = deps.admission.admit(request)
    if (admitted instanceof GatewayError) return refuse(res, exchanges, network, deps.counters, admitted)
    const { key, pool } = admitted
    // A Private Node account's subscriptions are made on its dedicated node, as its calls are.
    const hub = deps.subscriptions.hubFor(network, pool)
    const allowed = deps.allowance?.(key.account.accountId, key.actor.state.ws.limits.maxConnectionsPerKey)
    const d = key.actor.ws({ type: 'WsConnect', allowed })
    if (d.type === 'WsRefused') {
      const scope = { accountId: key.account.accountId, keyId: key.record.keyId, network }
      if (d.reason === 'ws-connections') {
        deps.decisions.limited(scope, 'ws-connections', 1)
        return refuse(res, exchanges, network, deps.counters, refusal('WS_CONNECTIONS_FULL', { limit: d.limit }))
      }
      if (d.reason === 'ws-connection-rate') deps.decisions.cooldownStarted(scope, d)
      deps.decisions.limited(scope, 'ws-cooldown', 1)
      const retryAfterS = Math.max(1, Math.ceil(d.retryAfterMs / 1000))
      const options = { headers: { 'Retry-After': String(retryAfterS) } }
      const e =
        d.reason === 'ws-connection-rate'
          ? refusal('WS_CONNECTIONS_TOO_FAST', { connections: d.connections, retryAfterS }, options)
          : refusal('WS_CONNECTIONS_COOLING', { retryAfterS }, options)
      return refuse(res, exchanges, network, deps.counters, e)
    }
    const session = new WsSession(admitted, hub, ip, {
      admission: deps.admission,
      ips: deps.ips,
      dispatcher: deps.dispatcher,
      usage: deps.usage,
      decisions: deps.decisions,
      counters: deps.counters,
      config: deps.config,
      clock: deps.clock,
      notifications: this.#notifications,
      onError: deps.onError,
    })
    res.upgrade<WsUserData>({ session }, secKey, protocol, extensions, context as never)
  }

  /** Close connections whose key was revoked, or whose plan ended, since they opened. */
  #checkKeys(): void {
    for (const session of this.#sessions) session.recheck()
  }
}

function refuse(res: HttpResponse, exchanges: Exchanges, network: string, counters: WsCounters, e: GatewayError): void {
  counters.refused(network, e.code)
  const state = exchanges.begin(res)
  sendReply(res, state, { status: e.http, body: errorResponseJson('null', e.rpc, e.message), headers: e.headers }, false)
}

/** Why uWS closed a connection by itself (1006 with its reason), in the words of /metrics. */
function uwsCloseCause(code: number, message: ArrayBuffer): WsCloseCause | undefined {
  if (code !== 1006 || message.byteLength === 0) return undefined
  const reason = Buffer.from(message).toString('latin1')
  if (reason === 'Received too big message') return 'message-too-big'
  if (reason === 'Received invalid UTF-8') return 'invalid-utf8'
  return undefined
}
