import type { WsConfig } from '../config/types.js'
import type { NodeKind } from '../core/node-kind.js'
import type { WebSocket } from '../front/uws.js'
import type { NotificationCharge } from './notification-charge.js'
import { closing, type Closing } from '../errors/close-reasons.js'

/** What of a uWS socket the turn writes through. */
export type OutgoingSocket = Pick<WebSocket<unknown>, 'cork' | 'send' | 'getBufferedAmount'>

export interface OutgoingTurnDeps {
  /** Read at each write: ws.maxBufferedBytes, the slow-consumer bound. */
  config: WsConfig
  /** This connection's notifications of the turn, charged before they are written. */
  charge: NotificationCharge
  /** Close the connection as a policy violation (1008) with `reason`: a slow consumer, or a budget spent. */
  violated(close: Closing): void
}

/** What uWS's `send` returns: sent, queued under backpressure (still sent), or dropped past its ceiling. */
const SEND = Object.freeze({ SENT: 1, BACKPRESSURE: 0, DROPPED: 2 } as const)
/** Not a uWS status: our own bound (ws.maxBufferedBytes) was over before the send. */
const OVER_OUR_BOUND = 3
type SendStatus = (typeof SEND)[keyof typeof SEND] | typeof OVER_OUR_BOUND

/**
 * One connection's messages of this event-loop turn, written together at its end in one cork (one
 * system call). A client with several calls in flight has its answers resolved together when the
 * node's answers arrive together (in-flight sharing resolves every copy of a call at once): one
 * system call per message was the largest cost of a WebSocket call (bench/README.md). A connection
 * with 100 copies of one log made 100 system calls.
 *
 * A client that lets more than ws.maxBufferedBytes pile up unread is disconnected with a reason
 * instead: buffering without bound would let one slow client eat the gateway's memory, and
 * silently skipping its notifications would leave it believing it saw every block. The bound is
 * checked before each send, so one large answer to a client with an empty buffer always goes out
 * whole.
 * @example
 * turn.send(answer, true) // written at the end of this turn, with the turn's other messages
 * turn.notify(text, 'full') // charged, then written the same way
 */
export class OutgoingTurn {
  readonly #socket: OutgoingSocket
  readonly #deps: OutgoingTurnDeps
  /** Messages waiting for the end of this loop turn; undefined when none. */
  #queued: string[] | undefined
  #closed = false

  constructor(socket: OutgoingSocket, deps: OutgoingTurnDeps) {
    this.#socket = socket
    this.#deps = deps
  }

  /**
   * Send one message: `later` queues it for the end of this event-loop turn. A message sent while
   * others wait joins them, in order.
   */
  send(text: string, later = false): boolean {
    if (this.#closed) return false
    if (this.#queued !== undefined) {
      this.#queued.push(text)
      return true
    }
    if (later) {
      this.#queued = [text]
      endOfTurn.add(this)
      return true
    }
    return this.#write([text])
  }

  /** One notification copy: charged (past a budget the connection closes), then sent with the turn. */
  notify(text: string, kind: NodeKind): void {
    if (this.#closed) return
    const refused = this.#deps.charge.take(text, kind)
    if (refused !== undefined) return this.#deps.violated(refused)
    this.send(text, true)
    // What waits for the end of the turn is held in memory: past the slow-consumer bound's worth,
    // it is written now, so that the bound applies within a turn too (a turn may carry many of
    // the node's notifications, each fanned out to every copy).
    if (this.#deps.charge.bytes > this.#deps.config.maxBufferedBytes) this.flush()
  }

  /** Write what waits for the end of the turn (at the turn's end; before a close of ours too). */
  flush(): void {
    const queued = this.#queued
    if (queued === undefined) return
    this.#queued = undefined
    this.#deps.charge.settle()
    this.#write(queued)
  }

  /** The connection is gone: what was queued is never written, nor charged. */
  close(): void {
    this.#closed = true
    this.#queued = undefined
    this.#deps.charge.discard()
  }

  /** Write messages in one cork (one system call), the slow-consumer bound checked before each. */
  #write(texts: readonly string[]): boolean {
    if (this.#closed) return false
    const socket = this.#socket
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
      this.#deps.violated(closing('SLOW_CONSUMER_UNREAD', { maxBytes: max }))
      return false
    }
    // Dropped by uWS's own backpressure ceiling (set far above ours; a safety net).
    if (status === SEND.DROPPED) {
      this.#deps.violated(closing('SLOW_CONSUMER_DROPPED', {}))
      return false
    }
    return true
  }
}

/**
 * The connections with messages waiting, written once per event-loop turn: setImmediate runs after
 * the turn's I/O callbacks (uWS's and the upstream sockets') and the promise reactions they
 * started, so every answer decided in the turn goes out in it, each connection's in one write.
 */
class EndOfTurn {
  readonly #turns = new Set<OutgoingTurn>()
  #scheduled = false

  add(turn: OutgoingTurn): void {
    this.#turns.add(turn)
    if (this.#scheduled) return
    this.#scheduled = true
    setImmediate(this.#flush)
  }

  readonly #flush = (): void => {
    this.#scheduled = false
    for (const turn of this.#turns) turn.flush()
    this.#turns.clear()
  }
}

const endOfTurn = new EndOfTurn()
