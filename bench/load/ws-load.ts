/**
 * A closed-loop WebSocket JSON-RPC load generator (wrk speaks no WebSocket): `connections`
 * sockets, each keeping `depth` calls in flight, ids counted up per socket; latency from send to
 * the answer with that id. The same client for every target, so that ratios hold even where the
 * client (undici's WebSocket) is slower than the target.
 *
 * Run as its own process: `node --import tsx bench/load/ws-load.ts '<json WsLoadOptions>'`; prints
 * one JSON line (WsLoadResult).
 */
import { WebSocket } from 'undici'

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

export async function runWsLoad(o: WsLoadOptions): Promise<WsLoadResult> {
  const latencies: number[] = []
  let errors = 0
  let requests = 0
  let measuring = false
  let stopping = false
  const sockets: WebSocket[] = []
  const open = (): Promise<WebSocket> =>
    new Promise((resolve, reject) => {
      const ws = new WebSocket(o.url)
      ws.addEventListener('open', () => resolve(ws))
      ws.addEventListener('error', () => reject(new Error(`cannot open ${o.url}`)))
    })
  for (let i = 0; i < (o.connections ?? 16); i++) sockets.push(await open())
  for (const ws of sockets) {
    let nextId = 1
    const sentAt = new Map<number, number>()
    const send = (): void => {
      if (stopping) return
      const id = nextId++
      sentAt.set(id, performance.now())
      ws.send(`{"jsonrpc":"2.0","id":${id},"method":"${o.method}","params":[]}`)
    }
    ws.addEventListener('message', (ev) => {
      const text = String(ev.data)
      const m = /"id":(\d+)/.exec(text)
      const id = m ? Number(m[1]) : -1
      const t0 = sentAt.get(id)
      if (t0 !== undefined) {
        sentAt.delete(id)
        if (measuring) {
          requests++
          if (text.includes('"error"')) errors++
          latencies.push((performance.now() - t0) * 1000)
        }
      }
      send()
    })
    for (let d = 0; d < (o.depth ?? 4); d++) send()
  }
  await new Promise((r) => setTimeout(r, o.warmupMs ?? 0))
  measuring = true
  const t0 = performance.now()
  await new Promise((r) => setTimeout(r, o.durationMs))
  measuring = false
  const elapsed = performance.now() - t0
  stopping = true
  for (const ws of sockets) ws.close()
  latencies.sort((a, b) => a - b)
  const pct = (p: number): number => Math.round(latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? 0)
  return { requests, errors, rps: Math.round((requests * 1000) / elapsed), p50Us: pct(50), p99Us: pct(99) }
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  const result = await runWsLoad(JSON.parse(process.argv[2]) as WsLoadOptions)
  process.stdout.write(JSON.stringify(result) + '\n')
  process.exit(0)
}
