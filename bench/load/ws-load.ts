/**
 * A closed-loop WebSocket JSON-RPC load generator (wrk speaks no WebSocket): `connections`
 * sockets, each keeping `depth` calls in flight, ids counted up per socket; latency from send to
 * the answer with that id. The same client for every target.
 *
 * It speaks the protocol on a plain TCP socket, as wrk speaks HTTP: a WebSocket client library
 * (undici's, then `ws`) cost more CPU per message than the gateway did, so on 2 cores the client set
 * the pace of every target alike and the ratios measured it (issue 14). Here a call costs one
 * frame header and a string write: client frames carry the all-zero masking key, which the
 * protocol allows (a server unmasks with whatever key the frame names), so no byte is rewritten;
 * the calls that become due in one read leave in one write; an answer is read only as far as its
 * id. No extension is asked for, so answers arrive as plain text frames.
 *
 * Run as its own process: `node --import tsx bench/load/ws-load.ts '<json WsLoadOptions>'`; prints
 * one JSON line (WsLoadResult).
 */
import { connect, type Socket } from 'node:net'

export interface WsLoadOptions {
  url: string
  method: string
  durationMs: number
  warmupMs?: number
  connections?: number
  depth?: number
}

export interface WsLoadResult {
  requests: number
  errors: number
  rps: number
  p50Us: number
  p99Us: number
}

/** Opcodes of RFC 6455 §5.2 that a load generator meets. */
const TEXT = 0x1
const CLOSE = 0x8
const PING = 0x9

/** Open a WebSocket on a raw socket: resolve with the socket and any bytes read past the 101 answer. */
function handshake(url: URL): Promise<{ socket: Socket; rest: Buffer }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: url.hostname, port: Number(url.port || 80), noDelay: true })
    let head = Buffer.alloc(0)
    const onData = (d: Buffer): void => {
      head = Buffer.concat([head, d])
      const end = head.indexOf('\r\n\r\n')
      if (end < 0) return
      socket.off('data', onData)
      const status = head.subarray(0, head.indexOf('\r\n')).toString()
      if (!/^HTTP\/1\.1 101/.test(status)) return reject(new Error(`cannot open ${url.href}: ${status}`))
      resolve({ socket, rest: head.subarray(end + 4) })
    }
    socket.on('data', onData)
    socket.once('error', (err) => reject(new Error(`cannot open ${url.href}: ${err.message}`)))
    socket.write(
      `GET ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Key: dG9sbGdhdGUtbG9hZC0xNg==\r\nSec-WebSocket-Version: 13\r\n\r\n`,
    )
  })
}

/** A client text frame with the all-zero mask: FIN + text, MASK bit + length, 4 zero bytes, payload. */
function frame(text: string): Buffer {
  const payload = Buffer.from(text)
  const n = payload.length
  const header = n < 126 ? Buffer.from([0x80 | TEXT, 0x80 | n, 0, 0, 0, 0]) : Buffer.from([0x80 | TEXT, 0x80 | 126, n >> 8, n & 0xff, 0, 0, 0, 0])
  return Buffer.concat([header, payload])
}

/** The first `"id":N` of a frame's payload, read from its bytes without decoding the text. */
function idOf(buf: Buffer, start: number, end: number): number {
  const at = buf.indexOf('"id":', start)
  if (at < 0 || at >= end) return -1
  let id = 0
  for (let i = at + 5; i < end; i++) {
    const c = buf[i]!
    if (c < 0x30 || c > 0x39) break
    id = id * 10 + (c - 0x30)
  }
  return id
}

export async function runWsLoad(o: WsLoadOptions): Promise<WsLoadResult> {
  const url = new URL(o.url)
  const depth = o.depth ?? 4
  const latencies: number[] = []
  let errors = 0
  let requests = 0
  let measuring = false
  let stopping = false
  const sockets: Socket[] = []
  const opened = await Promise.all(Array.from({ length: o.connections ?? 16 }, () => handshake(url)))
  const prefix = `{"jsonrpc":"2.0","method":"${o.method}","params":[],"id":`
  for (const { socket, rest } of opened) {
    sockets.push(socket)
    let nextId = 1
    /** Send times by id modulo a power of two above depth: at most depth calls are in flight. */
    const slots = new Float64Array(64)
    let pending = Buffer.alloc(0)
    const call = (): Buffer => {
      const id = nextId++
      slots[id & 63] = performance.now()
      return frame(prefix + id + '}')
    }
    const onData = (d: Buffer): void => {
      const buf = pending.length === 0 ? d : Buffer.concat([pending, d])
      let at = 0
      const out: Buffer[] = []
      while (buf.length - at >= 2) {
        const opcode = buf[at]! & 0x0f
        let len = buf[at + 1]! & 0x7f
        let start = at + 2
        if (len === 126) {
          if (buf.length - at < 4) break
          len = buf.readUInt16BE(at + 2)
          start = at + 4
        } else if (len === 127) {
          if (buf.length - at < 10) break
          len = Number(buf.readBigUInt64BE(at + 2))
          start = at + 10
        }
        const end = start + len
        if (end > buf.length) break
        if (opcode === TEXT) {
          const id = idOf(buf, start, end)
          if (id > 0 && id < nextId && id >= nextId - depth) {
            if (measuring) {
              requests++
              const errorAt = buf.indexOf('"error"', start)
              if (errorAt >= 0 && errorAt < end) errors++
              latencies.push((performance.now() - slots[id & 63]!) * 1000)
            }
            if (!stopping) out.push(call())
          }
        } else if (opcode === PING) {
          out.push(Buffer.from([0x80 | 0xa, 0x80 | len, 0, 0, 0, 0]), buf.subarray(start, end))
        } else if (opcode === CLOSE) {
          errors++
        }
        at = end
      }
      pending = at === buf.length ? Buffer.alloc(0) : Buffer.from(buf.subarray(at))
      if (out.length === 1) socket.write(out[0]!)
      else if (out.length > 1) socket.write(Buffer.concat(out))
    }
    socket.on('data', onData)
    socket.on('error', () => errors++)
    if (rest.length > 0) onData(rest)
    socket.write(Buffer.concat(Array.from({ length: depth }, call)))
  }
  await new Promise((r) => setTimeout(r, o.warmupMs ?? 0))
  measuring = true
  const t0 = performance.now()
  await new Promise((r) => setTimeout(r, o.durationMs))
  measuring = false
  const elapsed = performance.now() - t0
  stopping = true
  for (const s of sockets) s.destroy()
  latencies.sort((a, b) => a - b)
  const pct = (p: number): number => Math.round(latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? 0)
  return { requests, errors, rps: Math.round((requests * 1000) / elapsed), p50Us: pct(50), p99Us: pct(99) }
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  const result = await runWsLoad(JSON.parse(process.argv[2]) as WsLoadOptions)
  process.stdout.write(JSON.stringify(result) + '\n')
  process.exit(0)
}
