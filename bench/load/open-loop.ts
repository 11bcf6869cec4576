/**
 * An open-loop HTTP load generator (what wrk2 does; wrk2 is not in Debian): requests are sent on
 * a timetable at a fixed rate whether or not earlier ones were answered, and each latency is
 * measured from the time the request was DUE, not from when it was written. A closed-loop tool
 * (wrk, autocannon without a rate) waits for answers before sending more, so a stall delays the
 * requests that would have seen it and hides it from the percentiles ("coordinated omission").
 *
 * Raw sockets with a prebuilt request and a minimal response parser, so that the generator costs
 * little CPU on a 2-core machine; one request in flight per connection (no pipelining). Timers tick every ~1 ms: requests that fell due since the last
 * tick are sent together, and that wait counts in their latency (reported as `lagP99Us`).
 *
 * Run as its own process: `node --import tsx bench/load/open-loop.ts '<json OpenLoopOptions>'`;
 * prints one JSON line (OpenLoopResult).
 */
import { connect, type Socket } from 'node:net'
import { readFileSync } from 'node:fs'

export interface OpenLoopOptions {
  url: string
  bodyFile: string
  headers?: Record<string, string>
  rate: number
  durationMs: number
  /** Not measured: lets connections and JITs warm up at the same rate. */
  warmupMs?: number
  /** Connections (default 100). */
  connections?: number
  /** Most connections, opening more when all are busy (default: no more than `connections`). */
  maxConnections?: number
}

export interface OpenLoopResult {
  rate: number
  sent: number
  completed: number
  statusErrors: number
  /** Requests still unanswered at the end (counted with their latency so far). */
  unanswered: number
  p50Us: number
  p90Us: number
  p95Us: number
  p99Us: number
  p999Us: number
  maxUs: number
  /** p99 of (actual write time - due time): the generator's own scheduling delay. */
  lagP99Us: number
  /** Latency from the actual write (the due-time figures minus the generator's timer lag). */
  serviceP50Us: number
  serviceP95Us: number
  serviceP99Us: number
  achievedRps: number
  /** Connections open at the end: more than at the start when the target fell behind. */
  connectionsUsed: number
  /**
   * Connections the target closed during the run (uWebSockets.js closes one idle for ~10 s): each
   * is dropped from the pool, and its requests in flight count as unanswered.
   */
  connectionsClosedByTarget: number
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return 0
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
}

const CRLFCRLF = Buffer.from('\r\n\r\n')
const CONTENT_LENGTH = Buffer.from('\r\nContent-Length:')
const CONTENT_LENGTH_LOWER = Buffer.from('\r\ncontent-length:')
const EMPTY = Buffer.alloc(0)

/** One keep-alive connection: due times of requests in flight, in order (HTTP/1.1 answers in order). */
export class Conn {
  readonly due: number[] = []
  readonly sentAt: number[] = []
  /** The target ended or reset it: nothing more is sent on it. */
  closed = false
  #head = 0
  #buf: Buffer = Buffer.alloc(0)
  constructor(
    readonly socket: Socket,
    readonly onAnswer: (dueAt: number, sentAt: number, status: number) => void,
    onClose: () => void,
  ) {
    socket.setNoDelay(true)
    socket.on('data', (chunk: Buffer) => this.#onData(chunk))
    // Its end first ('close' follows a tick later): a request written in between would be lost.
    const closed = (): void => {
      if (this.closed) return
      this.closed = true
      onClose()
    }
    socket.on('end', closed)
    socket.on('close', closed)
    socket.on('error', () => {})
  }

  inFlight(): number {
    return this.due.length - this.#head
  }

  pending(): number[] {
    return this.due.slice(this.#head)
  }

  // Parsed on the bytes, with no strings made per answer: the generator shares the machine's
  // cores with the target, and its own CPU per request shows up as everyone's latency.
  #onData(chunk: Buffer): void {
    this.#buf = this.#buf.length === 0 ? chunk : Buffer.concat([this.#buf, chunk])
    for (;;) {
      const buf = this.#buf
      const end = buf.indexOf(CRLFCRLF)
      if (end < 0) return
      const status = (buf[9] - 48) * 100 + (buf[10] - 48) * 10 + (buf[11] - 48)
      let total: number
      let cl = buf.indexOf(CONTENT_LENGTH)
      if (cl < 0 || cl > end) cl = buf.indexOf(CONTENT_LENGTH_LOWER)
      if (cl >= 0 && cl < end) {
        let i = cl + CONTENT_LENGTH.length
        while (buf[i] === 32) i++
        let length = 0
        while (buf[i] >= 48 && buf[i] <= 57) length = length * 10 + (buf[i++] - 48)
        total = end + 4 + length
      } else if (buf.subarray(0, end).toString('latin1').toLowerCase().includes('transfer-encoding: chunked')) {
        const last = buf.indexOf('\r\n0\r\n\r\n', end + 2)
        if (last < 0) return
        total = last + 7
      } else {
        total = end + 4 // 204 and friends
      }
      if (buf.length < total) return
      this.#buf = total === buf.length ? EMPTY : buf.subarray(total)
      const dueAt = this.due[this.#head]
      const sentAt = this.sentAt[this.#head++]
      if (this.#head > 1024) {
        this.due.splice(0, this.#head)
        this.sentAt.splice(0, this.#head)
        this.#head = 0
      }
      this.onAnswer(dueAt, sentAt, status)
    }
  }
}

export async function runOpenLoop(o: OpenLoopOptions): Promise<OpenLoopResult> {
  const url = new URL(o.url)
  const body = readFileSync(o.bodyFile)
  let head = `POST ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n`
  for (const [k, v] of Object.entries(o.headers ?? {})) head += `${k}: ${v}\r\n`
  const request = Buffer.concat([Buffer.from(head + '\r\n'), body])
  const warmupMs = o.warmupMs ?? 0
  const capacity = Math.ceil((o.rate * (o.durationMs + 2000)) / 1000) + 1024
  const latencies = new Float64Array(capacity)
  const lags = new Float64Array(capacity)
  const service = new Float64Array(capacity)
  let nService = 0
  let nLat = 0
  let nLag = 0
  let completed = 0
  let statusErrors = 0
  let start = 0
  const measureFrom = (): number => start + warmupMs
  const onAnswer = (dueAt: number, sentAt: number, status: number): void => {
    if (dueAt < measureFrom()) return
    completed++
    if (status < 200 || status >= 300) statusErrors++
    const now = performance.now()
    if (nLat < capacity) latencies[nLat++] = (now - dueAt) * 1000
    if (nService < capacity) service[nService++] = (now - sentAt) * 1000
  }
  // One request per connection at a time, as real clients do: no HTTP pipelining (which few
  // clients use, and which uWebSockets.js does not serve for answers given asynchronously, see
  // bench/README.md). A fixed set of connections, as wrk2 has: when every one is busy, a due
  // request waits for the first free one, and that wait counts in its latency. (Opening more
  // connections on demand made the generator itself the bottleneck: a connection storm.)
  const maxConnections = o.maxConnections ?? o.connections ?? 100
  const conns: Conn[] = []
  const idle: Conn[] = []
  const waiting: number[] = []
  let opening = 0
  let alive = 0
  let peakConnections = 0
  let closedByTarget = 0
  let finished = false
  const send = (c: Conn, dueAt: number): void => {
    const now = performance.now()
    c.due.push(dueAt)
    c.sentAt.push(now)
    c.socket.write(request)
    if (dueAt >= measureFrom() && nLag < capacity) lags[nLag++] = (now - dueAt) * 1000
  }
  const release = (c: Conn): void => {
    const dueAt = waiting.shift()
    if (dueAt === undefined) idle.push(c)
    else send(c, dueAt)
  }
  const openMore = (): void => {
    if (alive + opening < maxConnections) open().then(release, () => {})
  }
  // A connection the target closed leaves the pool; one waiting request opens another.
  const onClose = (c: Conn): void => {
    alive--
    const i = idle.indexOf(c)
    if (i >= 0) idle.splice(i, 1)
    if (finished) return
    closedByTarget++
    if (waiting.length > 0) openMore()
  }
  const open = (): Promise<Conn> =>
    new Promise<Conn>((resolve, reject) => {
      opening++
      const s = connect(Number(url.port), url.hostname, () => {
        opening--
        s.removeListener('error', failed)
        alive++
        const c: Conn = new Conn(
          s,
          (dueAt, sentAt, status) => {
            onAnswer(dueAt, sentAt, status)
            if (!c.closed) release(c)
          },
          () => onClose(c),
        )
        conns.push(c)
        peakConnections = Math.max(peakConnections, alive)
        resolve(c)
      })
      const failed = (err: Error): void => {
        opening--
        reject(err)
      }
      s.once('error', failed)
    })
  for (const c of await Promise.all(Array.from({ length: o.connections ?? 100 }, open))) idle.push(c)
  const total = Math.floor((o.rate * (warmupMs + o.durationMs)) / 1000)
  const intervalMs = 1000 / o.rate
  let sent = 0
  start = performance.now()
  await new Promise<void>((resolve) => {
    const tick = (): void => {
      const now = performance.now()
      const dueCount = Math.min(total, Math.floor((now - start) / intervalMs) + 1)
      while (sent < dueCount) {
        const dueAt = start + sent * intervalMs
        sent++
        const c = idle.pop()
        if (c !== undefined) {
          send(c, dueAt)
          continue
        }
        waiting.push(dueAt)
        openMore()
      }
      if (sent >= total) resolve()
      else setTimeout(tick, 1)
    }
    tick()
  })
  // Wait for the last answers, bounded: what is still missing then counts with its wait so far.
  const waitUntil = performance.now() + 2000
  const answering = (): boolean => waiting.length > 0 || conns.some((c) => !c.closed && c.inFlight() > 0)
  while (answering() && performance.now() < waitUntil) await new Promise((r) => setTimeout(r, 5))
  finished = true
  let unanswered = 0
  const now = performance.now()
  for (const dueAt of waiting) {
    if (dueAt < measureFrom()) continue
    unanswered++
    if (nLat < capacity) latencies[nLat++] = (now - dueAt) * 1000
  }
  for (const c of conns) {
    for (const dueAt of c.pending()) {
      if (dueAt < measureFrom()) continue
      unanswered++
      if (nLat < capacity) latencies[nLat++] = (now - dueAt) * 1000
    }
    c.socket.destroy()
  }
  const sorted = latencies.subarray(0, nLat).sort()
  const lagSorted = lags.subarray(0, nLag).sort()
  const serviceSorted = service.subarray(0, nService).sort()
  const measuredSent = total - Math.floor((o.rate * warmupMs) / 1000)
  return {
    rate: o.rate,
    sent: measuredSent,
    completed,
    statusErrors,
    unanswered,
    p50Us: Math.round(percentile(sorted, 50)),
    p90Us: Math.round(percentile(sorted, 90)),
    p95Us: Math.round(percentile(sorted, 95)),
    p99Us: Math.round(percentile(sorted, 99)),
    p999Us: Math.round(percentile(sorted, 99.9)),
    maxUs: Math.round(sorted.length ? sorted[sorted.length - 1] : 0),
    lagP99Us: Math.round(percentile(lagSorted, 99)),
    serviceP50Us: Math.round(percentile(serviceSorted, 50)),
    serviceP95Us: Math.round(percentile(serviceSorted, 95)),
    serviceP99Us: Math.round(percentile(serviceSorted, 99)),
    achievedRps: Math.round((completed * 1000) / o.durationMs),
    connectionsUsed: peakConnections,
    connectionsClosedByTarget: closedByTarget,
  }
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  const result = await runOpenLoop(JSON.parse(process.argv[2]) as OpenLoopOptions)
  process.stdout.write(JSON.stringify(result) + '\n')
  process.exit(0)
}
