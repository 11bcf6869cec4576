import { request } from 'node:http'
import { createHash, randomBytes, randomFillSync } from 'node:crypto'
import type { Socket } from 'node:net'
import { endianness } from 'node:os'

/**
 * A minimal RFC 6455 WebSocket client for the gateway's upstream sockets: text messages, ping,
 * close; no extensions. It exists for one reason the profile showed (bench/README.md): a general
 * client writes every frame with its own system call, and on the multiplexed upstream socket that
 * was the largest single cost of a small call. Here frames sent during one turn of the event loop
 * are written together (one writev) at the end of the turn.
 *
 * The surface is the part of the WHATWG WebSocket that WsTransport uses (readyState,
 * bufferedAmount, send, close, open/message/error/close listeners), except that a message is
 * handed over as bytes: a 1 MB answer is then never decoded on its way to the client.
 */

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11'
const OP_CONTINUATION = 0x0
const OP_TEXT = 0x1
const OP_BINARY = 0x2
const OP_CLOSE = 0x8
const OP_PING = 0x9
const OP_PONG = 0xa

/** First bytes kept of a message dropped for its size: our ids are a few digits near the start. */
const OVERSIZE_HEAD_BYTES = 256

/**
 * `bytes`: a message's payload (text frames are not decoded here: the caller may not need to).
 * `tooLarge`: the message was over the limit and dropped as it came; `bytes` then holds only its
 * first bytes (enough to read the id of the call it answers) and `tooLarge` its size.
 */
export interface MessageEvent {
  bytes?: Buffer
  tooLarge?: number
}
type Listener = (ev: MessageEvent) => void
type EventName = 'open' | 'message' | 'error' | 'close'

/** Masking keys, drawn in blocks: one randomFillSync per 1,024 frames instead of one per frame. */
const maskPool = Buffer.alloc(4096)
let maskOffset = maskPool.length

function nextMask(): Buffer {
  if (maskOffset >= maskPool.length) {
    randomFillSync(maskPool)
    maskOffset = 0
  }
  maskOffset += 4
  return maskPool.subarray(maskOffset - 4, maskOffset)
}

/**
 * Payloads from this size on are masked a 32-bit word at a time (see encodeFrame). Below it the
 * view and the moved buffer cost more than they save: 64 bytes 167 against 308 ns, even at 256,
 * 900 against 627 ns at 512 (a single call's frame is 60-200 bytes; a batch's, kilobytes).
 */
const WORD_MASK_MIN = 512
const LITTLE_ENDIAN = endianness() === 'LE'

/** One client frame (clients must mask): header, masking key, masked payload, in one buffer. */
function encodeFrame(opcode: number, payload: Buffer): Buffer {
  const len = payload.length
  const head = len < 126 ? 2 : len < 65536 ? 4 : 10
  // A payload that will be masked by words starts on a 4-byte boundary: Node's buffers start on
  // an 8-byte one, so a header of 2 or 10 bytes (and the 4 of the key) is moved 2 bytes in.
  const pad = len >= WORD_MASK_MIN && head !== 4 ? 2 : 0
  const whole = Buffer.allocUnsafe(pad + head + 4 + len)
  const frame = pad === 0 ? whole : whole.subarray(pad)
  frame[0] = 0x80 | opcode
  if (head === 2) frame[1] = 0x80 | len
  else if (head === 4) {
    frame[1] = 0x80 | 126
    frame.writeUInt16BE(len, 2)
  } else {
    frame[1] = 0x80 | 127
    frame.writeBigUInt64BE(BigInt(len), 2)
  }
  const mask = nextMask()
  mask.copy(frame, head)
  const m0 = mask[0]
  const m1 = mask[1]
  const m2 = mask[2]
  const m3 = mask[3]
  const off = head + 4
  let i = 0
  if (len >= WORD_MASK_MIN && ((frame.byteOffset + off) & 3) === 0) {
    // Four bytes at a time: a byte at a time, masking the 3 KB frame of a batch of 50 calls was
    // 5% of the batch's CPU (and a 1 MB eth_call would take milliseconds).
    payload.copy(frame, off)
    const words = len >>> 2
    const view = new Int32Array(frame.buffer, frame.byteOffset + off, words)
    const m = LITTLE_ENDIAN ? m0 | (m1 << 8) | (m2 << 16) | (m3 << 24) : (m0 << 24) | (m1 << 16) | (m2 << 8) | m3
    for (let w = 0; w < words; w++) view[w] ^= m
    i = words << 2
    if (i < len) frame[off + i] ^= m0
    if (i + 1 < len) frame[off + i + 1] ^= m1
    if (i + 2 < len) frame[off + i + 2] ^= m2
    return frame
  }
  for (; i + 3 < len; i += 4) {
    frame[off + i] = payload[i] ^ m0
    frame[off + i + 1] = payload[i + 1] ^ m1
    frame[off + i + 2] = payload[i + 2] ^ m2
    frame[off + i + 3] = payload[i + 3] ^ m3
  }
  for (; i < len; i++) frame[off + i] = payload[i] ^ mask[i & 3]
  return frame
}

export class UpstreamWebSocket {
  static readonly CONNECTING = 0
  static readonly OPEN = 1
  static readonly CLOSING = 2
  static readonly CLOSED = 3

  readyState = UpstreamWebSocket.CONNECTING
  readonly url: string
  #socket: Socket | undefined
  readonly #listeners: Record<EventName, Listener[]> = { open: [], message: [], error: [], close: [] }
  /** Frames waiting for the end of this turn of the event loop. */
  #out: Buffer[] = []
  #outBytes = 0
  /** Received bytes not yet parsed into a whole frame, and how many are needed to go on. */
  #in: Buffer[] = []
  #inBytes = 0
  #need = 2
  /** Payloads of a fragmented message so far, and their total size. */
  #fragments: Buffer[] | undefined
  #fragmentBytes = 0
  readonly #maxMessageBytes: number
  /** A message over the limit being dropped: its first bytes and its size so far. */
  #oversize: { head: Buffer[]; headBytes: number; size: number } | undefined
  /** Payload bytes of the current frame still to drop, and whether it ends its message. */
  #skipLeft = 0
  #skipFin = false

  /** @param opts.maxMessageBytes largest message kept (default: no limit); a larger one is dropped as it comes */
  constructor(url: string, opts: { maxMessageBytes?: number } = {}) {
    this.url = url
    this.#maxMessageBytes = opts.maxMessageBytes ?? Number.MAX_SAFE_INTEGER
    const u = new URL(url)
    const key = randomBytes(16).toString('base64')
    const req = request({
      host: u.hostname,
      port: u.port || 80,
      path: u.pathname + u.search,
      headers: { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Key': key, 'Sec-WebSocket-Version': '13' },
    })
    req.on('upgrade', (res, socket, head) => {
      const expected = createHash('sha1')
        .update(key + GUID)
        .digest('base64')
      if (res.headers['sec-websocket-accept'] !== expected) {
        socket.destroy()
        return this.#closed()
      }
      this.#attach(socket, head)
    })
    req.on('response', (res) => {
      // Not a 101: the server refused the upgrade.
      res.resume()
      this.#emit('error', {})
      this.#closed()
    })
    req.on('error', () => {
      this.#emit('error', {})
      this.#closed()
    })
    req.end()
  }

  addEventListener(type: EventName, fn: Listener): void {
    this.#listeners[type].push(fn)
  }

  /** Bytes accepted by send() and not yet handed to the kernel. */
  get bufferedAmount(): number {
    return this.#outBytes + (this.#socket?.writableLength ?? 0)
  }

  send(text: string): void {
    if (this.readyState !== UpstreamWebSocket.OPEN) return
    this.#queue(encodeFrame(OP_TEXT, Buffer.from(text)))
  }

  /** Start the closing handshake; `close` is emitted when the socket is gone. */
  close(): void {
    if (this.readyState === UpstreamWebSocket.OPEN) {
      this.readyState = UpstreamWebSocket.CLOSING
      this.#queue(encodeFrame(OP_CLOSE, Buffer.from([0x03, 0xe8]))) // 1000: normal closure
      this.#flush()
      this.#socket?.end()
    } else if (this.readyState === UpstreamWebSocket.CONNECTING) {
      this.readyState = UpstreamWebSocket.CLOSING
    }
  }

  #attach(socket: Socket, head: Buffer): void {
    this.#socket = socket
    socket.setNoDelay(true)
    socket.on('data', (chunk: Buffer) => this.#onData(chunk))
    socket.on('error', () => this.#emit('error', {}))
    socket.on('close', () => this.#closed())
    if (this.readyState === UpstreamWebSocket.CLOSING) {
      // close() was called while connecting.
      socket.destroy()
      return
    }
    this.readyState = UpstreamWebSocket.OPEN
    this.#emit('open', {})
    if (head.length > 0) this.#onData(head)
  }

  #queue(frame: Buffer): void {
    this.#out.push(frame)
    this.#outBytes += frame.length
    // The first frame of this turn schedules the write; the others ride along with it.
    if (this.#out.length === 1) setImmediate(() => this.#flush())
  }

  #flush(): void {
    const frames = this.#out
    if (frames.length === 0) return
    this.#out = []
    this.#outBytes = 0
    const socket = this.#socket
    if (socket === undefined || socket.destroyed) return
    if (frames.length === 1) {
      socket.write(frames[0])
      return
    }
    socket.cork()
    for (const f of frames) socket.write(f)
    socket.uncork()
  }

  #onData(chunk: Buffer): void {
    if (this.#skipLeft > 0) {
      const take = Math.min(this.#skipLeft, chunk.length)
      this.#keepHead(chunk.subarray(0, take))
      this.#skipLeft -= take
      if (this.#skipLeft > 0) return
      if (this.#skipFin) this.#endOversize()
      if (take === chunk.length) return
      chunk = chunk.subarray(take)
    }
    this.#in.push(chunk)
    this.#inBytes += chunk.length
    if (this.#inBytes < this.#need) return
    // Joined once when enough has arrived: a 1 MB message in 64 KiB reads is copied once, not 16 times.
    const buf = this.#in.length === 1 ? this.#in[0] : Buffer.concat(this.#in, this.#inBytes)
    this.#in = []
    this.#inBytes = 0
    let off = 0
    this.#need = 2
    while (this.readyState !== UpstreamWebSocket.CLOSED) {
      const avail = buf.length - off
      if (avail < 2) break
      const b0 = buf[off]
      const b1 = buf[off + 1]
      let len = b1 & 0x7f
      let head = 2
      if (len === 126) {
        if (avail < 4) {
          this.#need = 4
          break
        }
        len = buf.readUInt16BE(off + 2)
        head = 4
      } else if (len === 127) {
        if (avail < 10) {
          this.#need = 10
          break
        }
        len = Number(buf.readBigUInt64BE(off + 2))
        head = 10
      }
      if (b1 & 0x80) {
        // A server must not mask its frames (RFC 6455, 5.1): a protocol error.
        this.#socket?.destroy()
        return
      }
      const opcode = b0 & 0x0f
      if (opcode <= OP_BINARY && this.#overLimit(opcode, len)) {
        // Dropped as it comes rather than buffered whole: without this a node announcing a 50 MB
        // frame would make us hold 50 MB (or 2^53 bytes) before anything could refuse it.
        const take = Math.min(len, avail - head)
        this.#keepHead(buf.subarray(off + head, off + head + take))
        off += head + take
        if (take < len) {
          this.#skipLeft = len - take
          this.#skipFin = (b0 & 0x80) !== 0
          return
        }
        if (b0 & 0x80) this.#endOversize()
        continue
      }
      if (avail < head + len) {
        this.#need = head + len
        break
      }
      this.#onFrame((b0 & 0x80) !== 0, opcode, buf.subarray(off + head, off + head + len))
      off += head + len
    }
    if (off < buf.length) {
      this.#in.push(buf.subarray(off))
      this.#inBytes = buf.length - off
    }
  }

  /** Whether this data frame makes its message too large (then the message is dropped from here on). */
  #overLimit(opcode: number, len: number): boolean {
    if (opcode !== OP_CONTINUATION) this.#oversize = undefined
    if (this.#oversize !== undefined) {
      this.#oversize.size += len
      return true
    }
    const before = opcode === OP_CONTINUATION ? this.#fragmentBytes : 0
    if (before + len <= this.#maxMessageBytes) return false
    // The fragments so far are dropped too; their first bytes are kept as the message's head.
    this.#oversize = { head: [], headBytes: 0, size: before + len }
    if (opcode === OP_CONTINUATION) for (const f of this.#fragments ?? []) this.#keepHead(f)
    this.#fragments = undefined
    this.#fragmentBytes = 0
    return true
  }

  /** Keep the first bytes of a message being dropped: the id of the call it answers is there. */
  #keepHead(part: Buffer): void {
    const o = this.#oversize!
    if (o.headBytes >= OVERSIZE_HEAD_BYTES || part.length === 0) return
    const keep = part.subarray(0, OVERSIZE_HEAD_BYTES - o.headBytes)
    o.head.push(Buffer.from(keep))
    o.headBytes += keep.length
  }

  #endOversize(): void {
    const o = this.#oversize!
    this.#oversize = undefined
    this.#emit('message', { bytes: Buffer.concat(o.head, o.headBytes), tooLarge: o.size })
  }

  #onFrame(fin: boolean, opcode: number, payload: Buffer): void {
    switch (opcode) {
      case OP_TEXT:
      case OP_BINARY:
      case OP_CONTINUATION:
        if (opcode !== OP_CONTINUATION) {
          this.#fragments = undefined
          this.#fragmentBytes = 0
        }
        if (fin && this.#fragments === undefined) {
          this.#emit('message', { bytes: payload })
          return
        }
        ;(this.#fragments ??= []).push(payload)
        this.#fragmentBytes += payload.length
        if (fin) {
          const whole = Buffer.concat(this.#fragments)
          this.#fragments = undefined
          this.#fragmentBytes = 0
          this.#emit('message', { bytes: whole })
        }
        return
      case OP_PING:
        this.#queue(encodeFrame(OP_PONG, payload))
        return
      case OP_CLOSE:
        if (this.readyState === UpstreamWebSocket.OPEN) {
          this.readyState = UpstreamWebSocket.CLOSING
          this.#queue(encodeFrame(OP_CLOSE, payload.subarray(0, 2)))
          this.#flush()
        }
        this.#socket?.end()
        return
      default:
        return // pong, or a reserved opcode: nothing to do
    }
  }

  #closed(): void {
    if (this.readyState === UpstreamWebSocket.CLOSED) return
    this.readyState = UpstreamWebSocket.CLOSED
    this.#out = []
    this.#outBytes = 0
    this.#emit('close', {})
  }

  #emit(type: EventName, ev: MessageEvent): void {
    for (const fn of this.#listeners[type]) fn(ev)
  }
}
