import { UpstreamWebSocket, type MessageEvent } from './ws-client.js'
import { DEFAULT_MAX_UPSTREAM_BYTES, UpstreamAnswerTooLarge, UpstreamTimeout, UpstreamTransportError } from './errors.js'
import { batchHeadId, batchText, callText, readResponseHeadBytes, type BatchCall } from './json-rpc-wire.js'
import { answerShape, describeShape, sampleOf } from './answer-shape.js'

export interface WsTransportOptions {
  /** Name used in errors (default: host:port of the URL). */
  name?: string
  /**
   * Bytes queued on the socket above which canSend() says no (default 4 MiB), so that callers
   * use HTTP instead: without a bound a slow node would make us buffer without limit.
   */
  highWaterMark?: number
  /** First reconnect delay (default 100 ms); it doubles after each failed attempt... */
  reconnectMinMs?: number
  /** ...up to this (default 5 s), so that a node down for an hour is not hammered. */
  reconnectMaxMs?: number
  /**
   * Consecutive time-outs with no message from the node in between after which the socket is
   * dropped and opened again (default 3): a half-open TCP connection never closes by itself.
   */
  maxSilentTimeouts?: number
  /** Largest message read, in bytes (default 32 MiB, limits.maxUpstreamBytes); a larger one fails its call. */
  maxMessageBytes?: number
}

interface Pending {
  /** The answer's bytes; `text` when it was decoded to route it (a batch). */
  resolve(bytes: Buffer, text?: string): void
  reject(err: Error): void
  timer: NodeJS.Timeout
  /** A batch waits under each of its ids; all are forgotten when its answer (one array) comes. */
  ids?: number[]
}

const CLOSE_WAIT_MS = 1_000

/**
 * JSON-RPC over ONE WebSocket to a node, multiplexed with our own ids (docs/architecture.md measured
 * 80k rps this way against 32k for an HTTP pool). Replies are routed to pending calls by id;
 * messages without an id go to `onNotification`. Reconnects by itself until close().
 * @example
 * const ws = new WsTransport('ws://127.0.0.1:8545')
 * if (ws.canSend()) text = await ws.call('eth_blockNumber', [], 5000)
 */
export class WsTransport {
  readonly url: string
  readonly name: string
  /** Messages from the node that answer no call (subscription notifications); raw text. */
  onNotification: (msg: string) => void = () => {}
  /** Called when the socket opens (true) or is lost (false), e.g. to subscribe again. */
  onStateChange: (open: boolean) => void = () => {}
  /**
   * Called when the node sent something that is not JSON-RPC and the socket was dropped for it
   * (the calls pending on it fail with the same error), e.g. to log which node did what.
   */
  onGarbage: (err: UpstreamTransportError) => void = () => {}

  readonly #highWaterMark: number
  readonly #reconnectMinMs: number
  readonly #reconnectMaxMs: number
  readonly #maxSilentTimeouts: number
  readonly #maxMessageBytes: number
  readonly #pending = new Map<number, Pending>()
  #ws: UpstreamWebSocket | undefined
  #nextId = 1
  #failedAttempts = 0
  #silentTimeouts = 0
  #reconnectTimer: NodeJS.Timeout | undefined
  #closed = false
  /** The current socket has opened (onStateChange(false) is due when it goes). */
  #opened = false
  #openWaiters: (() => void)[] = []

  constructor(url: string, opts: WsTransportOptions = {}) {
    this.url = url
    this.name = opts.name ?? new URL(url).host
    this.#highWaterMark = opts.highWaterMark ?? 4 * 1024 * 1024
    this.#reconnectMinMs = opts.reconnectMinMs ?? 100
    this.#reconnectMaxMs = opts.reconnectMaxMs ?? 5_000
    this.#maxSilentTimeouts = opts.maxSilentTimeouts ?? 3
    this.#maxMessageBytes = opts.maxMessageBytes ?? DEFAULT_MAX_UPSTREAM_BYTES
    this.#connect()
  }

  /** The socket is open: calls can go over it. */
  isOpen(): boolean {
    return this.#ws?.readyState === UpstreamWebSocket.OPEN
  }

  /** Open and not backed up beyond the high-water mark. */
  canSend(): boolean {
    return this.isOpen() && this.#ws!.bufferedAmount < this.#highWaterMark
  }

  /** Calls sent and not yet answered. */
  get pending(): number {
    return this.#pending.size
  }

  /**
   * Send one call with our own id and resolve with the node's reply text (carrying our id).
   * @throws UpstreamTransportError the socket is not open (requestSent false) or closed with the call pending
   * @throws UpstreamTimeout no reply within `timeoutMs`; a late reply is dropped
   */
  call(method: string, params: unknown, timeoutMs: number): Promise<string> {
    return this.callBytes(method, params, timeoutMs).then((bytes) => bytes.toString('utf8'))
  }

  /** call(), resolving with the node's reply as the bytes it sent (nothing decoded). */
  callBytes(method: string, params: unknown, timeoutMs: number): Promise<Buffer> {
    const ws = this.#ws
    if (ws === undefined || ws.readyState !== UpstreamWebSocket.OPEN) {
      return Promise.reject(new UpstreamTransportError('WebSocket not open', { node: this.name, requestSent: false }))
    }
    const id = this.#nextId++
    const text = callText(id, method, params)
    return new Promise<Buffer>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id)
        reject(new UpstreamTimeout({ node: this.name, timeoutMs }))
        if (++this.#silentTimeouts >= this.#maxSilentTimeouts) this.#drop('no message through several time-outs')
      }, timeoutMs)
      this.#pending.set(id, { resolve, reject, timer })
      ws.send(text)
    })
  }

  /**
   * Send calls as ONE JSON-RPC batch (one frame) with consecutive ids of ours; resolves with the
   * node's answer text (an array, or whatever the node sent back for the batch) and the first id.
   * @throws UpstreamTransportError / UpstreamTimeout as call()
   */
  callBatch(calls: ReadonlyArray<BatchCall>, timeoutMs: number): Promise<{ text: string; firstId: number }> {
    const ws = this.#ws
    if (ws === undefined || ws.readyState !== UpstreamWebSocket.OPEN) {
      return Promise.reject(new UpstreamTransportError('WebSocket not open', { node: this.name, requestSent: false }))
    }
    const firstId = this.#nextId
    this.#nextId += calls.length
    const ids = calls.map((_, i) => firstId + i)
    const text = batchText(calls, firstId)
    return new Promise<{ text: string; firstId: number }>((resolve, reject) => {
      const timer = setTimeout(() => {
        for (const id of ids) this.#pending.delete(id)
        reject(new UpstreamTimeout({ node: this.name, timeoutMs }))
        if (++this.#silentTimeouts >= this.#maxSilentTimeouts) this.#drop('no message through several time-outs')
      }, timeoutMs)
      const pending: Pending = { resolve: (bytes, text) => resolve({ text: text ?? bytes.toString('utf8'), firstId }), reject, timer, ids }
      for (const id of ids) this.#pending.set(id, pending)
      ws.send(text)
    })
  }

  /** Resolves true once the socket is open, false after `timeoutMs` (for start-up and tests). */
  waitOpen(timeoutMs: number): Promise<boolean> {
    if (this.isOpen()) return Promise.resolve(true)
    return new Promise((resolve) => {
      const waiter = () => {
        clearTimeout(timer)
        resolve(true)
      }
      const timer = setTimeout(() => {
        this.#openWaiters = this.#openWaiters.filter((w) => w !== waiter)
        resolve(false)
      }, timeoutMs)
      this.#openWaiters.push(waiter)
    })
  }

  /** Stop reconnecting, fail pending calls and close the socket. */
  async close(): Promise<void> {
    this.#closed = true
    clearTimeout(this.#reconnectTimer)
    const ws = this.#ws
    this.#failPending('transport closed')
    if (ws === undefined || ws.readyState === UpstreamWebSocket.CLOSED) return
    await new Promise<void>((resolve) => {
      // A dead peer never completes the closing handshake: do not wait for it forever.
      const timer = setTimeout(resolve, CLOSE_WAIT_MS)
      ws.addEventListener('close', () => {
        clearTimeout(timer)
        resolve()
      })
      ws.close()
    })
  }

  #connect(): void {
    const ws = new UpstreamWebSocket(this.url, { maxMessageBytes: this.#maxMessageBytes })
    this.#ws = ws
    ws.addEventListener('open', () => {
      if (this.#ws !== ws) return
      this.#failedAttempts = 0
      this.#silentTimeouts = 0
      this.#opened = true
      const waiters = this.#openWaiters
      this.#openWaiters = []
      for (const w of waiters) w()
      this.onStateChange(true)
    })
    ws.addEventListener('message', (ev) => {
      if (this.#ws !== ws) return
      this.#silentTimeouts = 0
      if (ev.tooLarge !== undefined) this.#onTooLarge(ev)
      else if (ev.bytes !== undefined) this.#onMessage(ev.bytes)
    })
    // An error is always followed by close; close is where we clean up.
    ws.addEventListener('error', () => {})
    ws.addEventListener('close', () => {
      if (this.#ws === ws) this.#drop('WebSocket closed')
    })
  }

  #onMessage(bytes: Buffer): void {
    // What cannot be JSON-RPC (an empty or non-JSON frame, one cut off) is garbage: the stream can
    // no longer be trusted to carry our answers, so the socket is dropped, as geth's client does
    // on a message it cannot decode, and the calls on it fail now instead of timing out.
    const shape = answerShape(bytes)
    let id: number | string | null | undefined
    let text: string | undefined
    const first = bytes[0]
    if (shape !== 'json') {
      // A cut-off answer whose id can still be read fails that call only.
      if (shape === 'truncated') id = this.#readId(bytes)
      const err = this.#garbage(shape, bytes)
      const pending = typeof id === 'number' ? this.#take(id) : undefined
      if (pending !== undefined) return pending.reject(err)
      return this.#dropFor(err)
    }
    if (first === 0x5b /* [ */ || (first <= 0x20 && (text = bytes.toString('utf8')).trimStart().charCodeAt(0) === 0x5b)) {
      // A batch answer: routed by the id of its first element (nodes answer a batch with one array).
      text ??= bytes.toString('utf8')
      id = batchHeadId(text)
      if (id === undefined) return
    } else {
      try {
        // Read from the first bytes only: a 1 MB answer is routed without being decoded.
        id = readResponseHeadBytes(bytes).id
      } catch {
        // Braces around something that is not JSON: garbage as above.
        return this.#dropFor(this.#garbage('not-json', bytes))
      }
    }
    if (id === null) {
      this.onNotification(text ?? bytes.toString('utf8'))
      return
    }
    const pending = typeof id === 'number' ? this.#take(id) : undefined
    if (pending === undefined) return // a reply after its time-out: the caller has moved on
    pending.resolve(bytes, text)
  }

  /** A message over the limit, dropped as it came: the call it answers (read from its first bytes) fails. */
  #onTooLarge(ev: MessageEvent): void {
    const id = this.#readId(ev.bytes!)
    const pending = typeof id === 'number' ? this.#take(id) : undefined
    pending?.reject(new UpstreamAnswerTooLarge({ node: this.name, limit: this.#maxMessageBytes, size: ev.tooLarge }))
    // Unreadable: a notification, or an answer whose id is not near its start; its call times out.
  }

  /** The id of an answer (or of a batch answer's first element) from its first bytes; undefined when unreadable. */
  #readId(bytes: Buffer): number | string | null | undefined {
    let i = 0
    while (bytes[i] === 0x20 || bytes[i] === 0x0a || bytes[i] === 0x0d || bytes[i] === 0x09) i++
    if (bytes[i] === 0x5b) i++
    while (bytes[i] === 0x20 || bytes[i] === 0x0a || bytes[i] === 0x0d || bytes[i] === 0x09) i++
    try {
      return readResponseHeadBytes(i === 0 ? bytes : bytes.subarray(i)).id
    } catch {
      return undefined
    }
  }

  /** The pending call (or batch) waiting under `id`, forgotten with its other ids and its timer. */
  #take(id: number): Pending | undefined {
    const pending = this.#pending.get(id)
    if (pending === undefined) return undefined
    if (pending.ids) for (const other of pending.ids) this.#pending.delete(other)
    else this.#pending.delete(id)
    clearTimeout(pending.timer)
    return pending
  }

  #garbage(shape: 'empty' | 'not-json' | 'truncated', bytes: Buffer): UpstreamTransportError {
    return new UpstreamTransportError(`a WebSocket message with ${describeShape(shape, bytes)}`, {
      node: this.name,
      requestSent: true,
      sample: bytes.length > 0 ? sampleOf(bytes) : undefined,
    })
  }

  /** The node sent garbage: say so, and drop the socket with its calls. */
  #dropFor(err: UpstreamTransportError): void {
    this.onGarbage(err)
    this.#drop(err.what, err)
  }

  /** Forget the current socket, fail its calls (with `err`, else a transport error saying `reason`), and open another one later. */
  #drop(reason: string, err?: UpstreamTransportError): void {
    const ws = this.#ws
    this.#ws = undefined
    if (ws !== undefined && ws.readyState !== UpstreamWebSocket.CLOSED && ws.readyState !== UpstreamWebSocket.CLOSING) ws.close()
    this.#failPending(reason, err)
    if (this.#opened) {
      this.#opened = false
      this.onStateChange(false)
    }
    if (this.#closed) return
    const delay = Math.min(this.#reconnectMaxMs, this.#reconnectMinMs * 2 ** this.#failedAttempts)
    this.#failedAttempts++
    // Jitter, so that many gateways do not reconnect to a restarted node in the same millisecond.
    this.#reconnectTimer = setTimeout(() => this.#connect(), delay * (0.5 + Math.random() / 2))
    this.#reconnectTimer.unref()
  }

  #failPending(reason: string, err?: UpstreamTransportError): void {
    if (this.#pending.size === 0) return
    // A batch is in the map once per id: reject it once.
    const calls = [...new Set(this.#pending.values())]
    this.#pending.clear()
    // They were written to the socket: the node may have executed them.
    for (const p of calls) {
      clearTimeout(p.timer)
      p.reject(err ?? new UpstreamTransportError(reason, { node: this.name, requestSent: true }))
    }
  }
}
