import { join } from 'node:path'
import { cpuMs, nodeScriptArgs, startReady, type Started } from './processes.js'
import type { SubscriberHeads, SubscribersOptions } from '../load/ws-subscribers.js'

const monotonicUs = (): number => Number(process.hrtime.bigint() / 1000n)
const SUBSCRIBERS = join(import.meta.dirname, '..', 'load', 'ws-subscribers.ts')
/** Opening thousands of sockets (and tsx compiling the script) on a loaded 2-core machine is slow. */
const OPEN_TIMEOUT_MS = 300_000

/** The time for a head to reach every one of `subscribers` sockets, spread over `clientProcesses` processes. */
export interface FanOutResult {
  subscribers: number
  clientProcesses: number
  heads: number
  /** Over every (head, subscriber) delivery timed: arrival − the stub's send time, ms. */
  p50Ms: number
  p99Ms: number
  maxMs: number
  /** Median over the heads of the time the head took to reach its last subscriber. */
  lastSubscriberMedianMs: number
  /** The same for each head, in the order they were sent: one slow head (a GC, the machine's other work) shows here. */
  lastSubscriberMs: number[]
  delivered: number
  expected: number
  /** Sockets the server closed while the heads were timed (a slow-consumer close would show here). */
  closedByServer: number
  /** CPU time per head timed, ms: the server's (from /proc), and the client processes' together. */
  serverCpuMsPerHead: number
  clientsCpuMsPerHead: number
  /**
   * When the heads were timed, from every socket subscribed to the last arrival collected, in µs
   * of CLOCK_MONOTONIC (process.hrtime): the clock of a CPU profile, to pick out this stretch.
   */
  timedFromUs: number
  timedToUs: number
}

/**
 * Subscribe `subscribers` sockets to newHeads on `url`, from `clientProcesses` processes
 * (bench/load/ws-subscribers.ts, each with its share of the sockets), then time the first `heads`
 * heads sent once every socket is subscribed. `serverPid` is the process whose CPU is reported
 * (the gateway, or the stub served directly).
 */
export async function fanOut(o: {
  url: string
  subscribers: number
  clientProcesses: number
  heads: number
  headMs: number
  serverPid: number
}): Promise<FanOutResult> {
  const k = o.clientProcesses
  const share = (i: number): number => Math.floor(o.subscribers / k) + (i < o.subscribers % k ? 1 : 0)
  // K processes open at once: together about as many handshakes in flight as one process alone.
  const parallel = Math.max(20, Math.ceil(200 / k))
  const starting = Array.from({ length: k }, (_, i) => {
    const arg: SubscribersOptions = { url: o.url, sockets: share(i), parallel }
    return startReady<{ open: number }>(`subscribers-${i}`, process.execPath, nodeScriptArgs(SUBSCRIBERS, arg), { timeoutMs: OPEN_TIMEOUT_MS })
  })
  const settled = await Promise.allSettled(starting)
  const clients = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []))
  try {
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected')
    if (failed) throw failed.reason
    return await timeHeads(o, clients)
  } finally {
    await Promise.all(clients.map((c) => c.stop()))
  }
}

async function timeHeads(o: Parameters<typeof fanOut>[0], clients: Started<{ open: number }>[]): Promise<FanOutResult> {
  const clientsCpu = (): number => clients.reduce((sum, c) => sum + cpuMs(c.pid), 0)
  // Every socket of every process is subscribed now: a head sent from here on goes to all of them.
  const after = performance.timeOrigin + performance.now()
  const timedFromUs = monotonicUs()
  const server0 = cpuMs(o.serverPid)
  const clients0 = clientsCpu()
  // Heads come every headMs; a slow fan-out delays them further: wait generously before giving up on one.
  const ask = JSON.stringify({ after, heads: o.heads, timeoutMs: 30_000 + o.heads * o.headMs * 4 })
  const replies = (await Promise.all(clients.map((c) => c.ask!(ask)))) as unknown as SubscriberHeads[]
  const timedToUs = monotonicUs()
  const serverCpuMs = cpuMs(o.serverPid) - server0
  const clientsCpuMs = clientsCpu() - clients0
  // The first `heads` heads any process saw, each with its arrivals from every process.
  const byHead = new Map<number, number[]>()
  for (const reply of replies) {
    for (const head of reply.heads) {
      const all = byHead.get(head.sentAt) ?? []
      for (const ms of head.latenciesMs) all.push(ms)
      byHead.set(head.sentAt, all)
    }
  }
  const timed = [...byHead.entries()].sort(([a], [b]) => a - b).slice(0, o.heads)
  const latencies = timed.flatMap(([, l]) => l).sort((a, b) => a - b)
  const at = (q: number): number => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? Number.NaN
  const round = (x: number): number => Math.round(x * 10) / 10
  const lastOfEach = timed.map(([, l]) => round(l.reduce((a, b) => Math.max(a, b), Number.NEGATIVE_INFINITY)))
  const lasts = [...lastOfEach].sort((a, b) => a - b)
  return {
    subscribers: o.subscribers,
    clientProcesses: clients.length,
    heads: timed.length,
    p50Ms: round(at(0.5)),
    p99Ms: round(at(0.99)),
    maxMs: round(latencies.at(-1) ?? Number.NaN),
    lastSubscriberMedianMs: lasts[Math.floor(lasts.length / 2)] ?? Number.NaN,
    lastSubscriberMs: lastOfEach,
    delivered: latencies.length,
    expected: o.subscribers * o.heads,
    closedByServer: replies.reduce((sum, r) => sum + r.closed, 0),
    // The window holds the timed heads and little else (the wait for the first, the time after the last).
    serverCpuMsPerHead: round(serverCpuMs / Math.max(1, timed.length)),
    clientsCpuMsPerHead: round(clientsCpuMs / Math.max(1, timed.length)),
    timedFromUs,
    timedToUs,
  }
}
