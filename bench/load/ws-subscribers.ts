/**
 * WebSocket newHeads subscribers, for the fan-out measurement of bench/ws-scenarios.ts: one
 * process of several, so that the time a head takes to reach 10,000 subscribers is the server's
 * and not one client process reading 10,000 sockets in turn. Opens `sockets` connections to
 * `url` (`parallel` handshakes at a time), subscribes each to newHeads, and prints
 * `{"ready":true,"open":N}` once every subscription is answered: from then on every head the
 * server sends reaches every socket. Each head (the stub's, carrying `sentAt`, its send time in ms
 * since the epoch) is timed on arrival with the same wall clock (same machine).
 *
 * On stdin, `{"after":T,"heads":H,"timeoutMs":X}` answers one JSON line (SubscriberHeads) with the
 * first H heads sent after T, once each has reached every socket or X ms have passed. SIGTERM
 * closes the sockets and exits.
 *
 * Run as its own process: `node --import tsx bench/load/ws-subscribers.ts '<json SubscribersOptions>'`.
 */
import { createInterface } from 'node:readline'
import WebSocket from 'ws'

export interface SubscribersOptions {
  url: string
  sockets: number
  /** Handshakes in flight at once (a listen backlog is not infinite; several processes open at the same time). */
  parallel?: number
}

/** One head as this process saw it: its send time and, per socket that got it, arrival − send time in ms. */
export interface HeadArrivals {
  sentAt: number
  latenciesMs: number[]
}

export interface SubscriberHeads {
  heads: HeadArrivals[]
  sockets: number
  /** Sockets closed by the server since ready (a slow-consumer close would show here). */
  closed: number
}

const now = (): number => performance.timeOrigin + performance.now()
const SENT_AT = Buffer.from('"sentAt":')

/** The head's send time, read from the bytes without decoding the message (the reader's CPU is part of what is timed). */
function sentAtOf(data: Buffer): number {
  const at = data.indexOf(SENT_AT)
  if (at < 0) return Number.NaN
  let end = at + SENT_AT.length
  while (end < data.length && ((data[end] >= 48 && data[end] <= 57) || data[end] === 46)) end++
  return Number(data.toString('latin1', at + SENT_AT.length, end))
}

function open(url: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url)
    ws.once('open', () => resolve(ws))
    ws.once('error', reject)
  })
}

/** Open and subscribe every socket; resolves when every subscription is answered. */
export async function subscribe(o: SubscribersOptions): Promise<{ sockets: WebSocket[]; byHead: Map<number, number[]>; closed: () => number }> {
  const parallel = o.parallel ?? 200
  const sockets: WebSocket[] = []
  for (let i = 0; i < o.sockets; i += parallel)
    sockets.push(...(await Promise.all(Array.from({ length: Math.min(parallel, o.sockets - i) }, () => open(o.url)))))
  const byHead = new Map<number, number[]>()
  let closed = 0
  let answered = 0
  await new Promise<void>((resolve, reject) => {
    for (const ws of sockets) {
      ws.once('close', () => closed++)
      ws.on('message', (data: Buffer) => {
        const arrived = now()
        const sentAt = sentAtOf(data)
        if (Number.isNaN(sentAt)) {
          // The answer to eth_subscribe (a notification always carries sentAt).
          if (!data.includes('"result":"0x')) reject(new Error(`subscription refused: ${data.toString().slice(0, 200)}`))
          if (++answered === sockets.length) resolve()
          return
        }
        let arrivals = byHead.get(sentAt)
        if (arrivals === undefined) byHead.set(sentAt, (arrivals = []))
        arrivals.push(arrived - sentAt)
      })
      ws.send('{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]}')
    }
  })
  // Heads that arrived while some sockets were still subscribing reached only some: not timed.
  byHead.clear()
  return { sockets, byHead, closed: () => closed }
}

/** The first `heads` heads sent after `after`, once each reached all `sockets` (or at `timeoutMs`). */
async function collect(byHead: Map<number, number[]>, sockets: number, after: number, heads: number, timeoutMs: number): Promise<HeadArrivals[]> {
  const deadline = Date.now() + timeoutMs
  const pick = (): HeadArrivals[] =>
    [...byHead.entries()]
      .filter(([sentAt]) => sentAt > after)
      .sort(([a], [b]) => a - b)
      .slice(0, heads)
      .map(([sentAt, latenciesMs]) => ({ sentAt, latenciesMs }))
  for (;;) {
    const got = pick()
    if ((got.length === heads && got.every((h) => h.latenciesMs.length >= sockets)) || Date.now() > deadline) return got
    await new Promise((r) => setTimeout(r, 100))
  }
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  const o = JSON.parse(process.argv[2]) as SubscribersOptions
  const run = await subscribe(o)
  process.stdout.write(JSON.stringify({ ready: true, open: run.sockets.length }) + '\n')
  const lines = createInterface({ input: process.stdin })
  lines.on('line', async (line) => {
    const ask = JSON.parse(line) as { after: number; heads: number; timeoutMs: number }
    const heads = await collect(run.byHead, run.sockets.length, ask.after, ask.heads, ask.timeoutMs)
    // To the µs: a shorter line to send (10,000 sockets × 10 heads).
    const rounded = heads.map((h) => ({ sentAt: h.sentAt, latenciesMs: h.latenciesMs.map((x) => Math.round(x * 1000) / 1000) }))
    const out: SubscriberHeads = { heads: rounded, sockets: run.sockets.length, closed: run.closed() }
    process.stdout.write(JSON.stringify(out) + '\n')
  })
  process.once('SIGTERM', () => {
    for (const ws of run.sockets) ws.terminate()
    process.exit(0)
  })
}
