/**
 * The open-loop generator of open-loop.ts for a fleet: one timetable at a fixed rate, each call
 * going to the target and with the key the schedule gives it, so that many accounts can call one
 * instance, or be spread over several. Each target has its own keep-alive connections (one call in
 * flight on each, no pipelining); a call due while all of its target's connections are busy waits
 * for the first one free. The requests are prebuilt, one per (target, key).
 *
 * Schedules (call i of the run, T targets, K keys):
 * - `one`: every call to target 0, key i mod K;
 * - `spread`: target i mod T, key floor(i / T) mod K: each key's calls go round robin over all the
 *   targets (every account on every instance), as a balancer spreading each client's calls does.
 *
 * Run as its own process: `node --import tsx bench/load/open-loop-fleet.ts FILE`, FILE holding the
 * FleetLoadOptions as JSON (1,200 keyed paths are more than one argument may hold); prints one JSON
 * line (FleetLoadResult).
 */
import { readFileSync } from 'node:fs'
import { connect } from 'node:net'
import { Conn } from './open-loop.js'

export interface FleetLoadOptions {
  /** Each target's port on 127.0.0.1 and the path (query string included) of each key. */
  targets: Array<{ port: number; paths: string[] }>
  schedule: 'one' | 'spread'
  body: string
  rate: number
  durationMs: number
  /** Connections per target. */
  connections: number
}

export interface FleetLoadResult {
  rate: number
  sent: number
  completed: number
  statusErrors: number
  unanswered: number
  /** Calls answered by each target. */
  completedByTarget: number[]
  achievedRps: number
  p50Us: number
  p99Us: number
}

export async function runFleetLoad(o: FleetLoadOptions): Promise<FleetLoadResult> {
  const body = Buffer.from(o.body)
  const requests = o.targets.map((t) =>
    t.paths.map((path) =>
      Buffer.concat([
        Buffer.from(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${t.port}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`),
        body,
      ]),
    ),
  )
  const T = o.targets.length
  const total = Math.floor((o.rate * o.durationMs) / 1000)
  const latencies = new Float64Array(total + 1)
  let nLat = 0
  let completed = 0
  let statusErrors = 0
  const completedByTarget = new Array<number>(T).fill(0)
  const idle: Conn[][] = o.targets.map(() => [])
  const waiting: Array<Array<{ dueAt: number; request: Buffer }>> = o.targets.map(() => [])
  const conns: Conn[] = []
  const send = (c: Conn, dueAt: number, request: Buffer): void => {
    c.due.push(dueAt)
    c.sentAt.push(performance.now())
    c.socket.write(request)
  }
  const open = (target: number): Promise<Conn> =>
    new Promise((resolve, reject) => {
      const s = connect(o.targets[target].port, '127.0.0.1', () => {
        s.removeListener('error', reject)
        const c: Conn = new Conn(
          s,
          (dueAt, _sentAt, status) => {
            completed++
            completedByTarget[target]++
            if (status < 200 || status >= 300) statusErrors++
            latencies[nLat++] = (performance.now() - dueAt) * 1000
            if (c.closed) return
            const next = waiting[target].shift()
            if (next === undefined) idle[target].push(c)
            else send(c, next.dueAt, next.request)
          },
          () => {
            const i = idle[target].indexOf(c)
            if (i >= 0) idle[target].splice(i, 1)
          },
        )
        conns.push(c)
        resolve(c)
      })
      s.once('error', reject)
    })
  for (let t = 0; t < T; t++) for (const c of await Promise.all(Array.from({ length: o.connections }, () => open(t)))) idle[t].push(c)
  const intervalMs = 1000 / o.rate
  let sent = 0
  const start = performance.now()
  await new Promise<void>((resolve) => {
    const tick = (): void => {
      const due = Math.min(total, Math.floor((performance.now() - start) / intervalMs) + 1)
      while (sent < due) {
        const i = sent++
        const dueAt = start + i * intervalMs
        const target = o.schedule === 'one' ? 0 : i % T
        const keys = requests[target]
        const key = o.schedule === 'one' ? i % keys.length : Math.floor(i / T) % keys.length
        const c = idle[target].pop()
        if (c !== undefined) send(c, dueAt, keys[key])
        else waiting[target].push({ dueAt, request: keys[key] })
      }
      if (sent >= total) resolve()
      else setTimeout(tick, 1)
    }
    tick()
  })
  // The last answers, within 2 s: what is still missing then is counted as unanswered.
  const waitUntil = performance.now() + 2000
  const answering = (): boolean => waiting.some((w) => w.length > 0) || conns.some((c) => !c.closed && c.inFlight() > 0)
  while (answering() && performance.now() < waitUntil) await new Promise((r) => setTimeout(r, 5))
  let unanswered = 0
  for (const w of waiting) unanswered += w.length
  for (const c of conns) {
    unanswered += c.inFlight()
    c.socket.destroy()
  }
  const sorted = latencies.subarray(0, nLat).sort()
  const at = (p: number): number => (sorted.length === 0 ? 0 : Math.round(sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]))
  return {
    rate: o.rate,
    sent: total,
    completed,
    statusErrors,
    unanswered,
    completedByTarget,
    achievedRps: Math.round((completed * 1000) / o.durationMs),
    p50Us: at(0.5),
    p99Us: at(0.99),
  }
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  const result = await runFleetLoad(JSON.parse(readFileSync(process.argv[2], 'utf8')) as FleetLoadOptions)
  process.stdout.write(`${JSON.stringify(result)}\n`)
  process.exit(0)
}
