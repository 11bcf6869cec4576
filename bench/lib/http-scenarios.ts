import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { request } from 'node:http'
import { randomBytes } from 'node:crypto'
import { interleave, measure, summarise, type LoadFigures, type Row } from './measure.js'
import { runWrk } from './wrk.js'
import { runNodeJson } from './processes.js'
import type { BenchContext } from './context.js'
import type { Target } from './targets.js'
import type { WsLoadResult } from '../load/ws-load.js'

/** A closed-loop HTTP scenario driven by wrk. */
export interface HttpScenario {
  name: string
  what: string
  bodyFile: string
  headers?: Record<string, string>
  targets: string[]
  connections: number
  /** A wrk script that makes the bodies (bench/load/distinct.lua, batch-distinct.lua) instead of the body file. */
  script?: 'distinct' | 'batch-distinct'
  /** What a correct answer looks like: checked once per target before measuring. */
  check: (res: { status: number; encoding: string | null; text: string }) => string | undefined
}

/** POST once and check the answer; the reason it is wrong, or undefined. */
export async function checkTarget(t: Target, s: HttpScenario): Promise<string | undefined> {
  try {
    const res = await fetch(t.http, { method: 'POST', headers: { 'content-type': 'application/json', ...s.headers }, body: readFileSync(s.bodyFile) })
    const text = await res.text()
    return s.check({ status: res.status, encoding: res.headers.get('content-encoding'), text })
  } catch (err) {
    return `request failed: ${(err as Error).message}`
  }
}

function pickTargets(ctx: BenchContext, ids: string[]): Target[] {
  return ids.flatMap((id) => {
    const t = ctx.set.targets.get(id)
    return t ? [t] : []
  })
}

export async function runHttpScenario(ctx: BenchContext, s: HttpScenario): Promise<Row[]> {
  if (!ctx.wrk) {
    ctx.notes.push(`${s.name}: skipped, wrk is not installed (apt-get install -y wrk, or run bench/setup.sh)`)
    return []
  }
  const wrk = ctx.wrk
  const targets: Target[] = []
  // --quick: the gateway against nginx only (all targets for small calls), to stay under a minute.
  const ids = ctx.opts.quick && s.name !== 'small' ? s.targets.filter((id) => id === 'gateway' || id === 'nginx') : s.targets
  for (const t of pickTargets(ctx, ids)) {
    const bad = await checkTarget(t, s)
    if (bad) ctx.notes.push(`${s.name}/${t.id}: skipped, wrong answer before measuring: ${bad}`)
    else targets.push(t)
  }
  ctx.log(`${s.name}: ${s.what} — ${targets.map((t) => t.id).join(', ')}`)
  const load = (t: Target, durationS: number) => (): Promise<LoadFigures> => wrkLoad(wrk, t, s, durationS)
  if (ctx.opts.warmupS > 0) for (const t of targets) await load(t, ctx.opts.warmupS)()
  const samples = await interleave(targets, ctx.opts.rounds, (t) => measure(t, ctx.set.stubPid, load(t, ctx.opts.durationS)))
  return targets.map((t) => summarise(s.name, t, samples.get(t.id)!))
}

/** One wrk measurement of a scenario's load on a target (on the CPUs `cpus` only, when given). */
export async function wrkLoad(wrk: string, t: Target, s: HttpScenario, durationS: number, cpus?: string): Promise<LoadFigures> {
  const { bodyFile, connections, headers, script } = s
  const r = await runWrk(wrk, { url: t.http, bodyFile, durationS, connections, headers, script, cpus })
  return { requests: r.requests, rps: r.rps, p50Us: r.p50Us, p99Us: r.p99Us, errors: r.errors + r.statusErrors }
}

/** Request bodies, written once per run into the results folder's temporary files. */
export function requestBodies(dir: string): Bodies {
  const write = (name: string, body: unknown): string => {
    const path = join(dir, name)
    writeFileSync(path, JSON.stringify(body))
    return path
  }
  return {
    small: write('small.json', { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }),
    // The check before measuring; wrk's distinct.lua makes the bodies it sends.
    distinct: write('distinct.json', { jsonrpc: '2.0', id: 1, method: 'eth_getBalance', params: [`0x${'0'.repeat(36)}1ecf`, 'latest'] }),
    // The check before measuring; wrk's calls-distinct.lua makes the bodies it sends.
    callsDistinct: write('calls-distinct.json', {
      jsonrpc: '2.0',
      id: 1,
      method: 'eth_call',
      params: [{ from: `0x${'0'.repeat(39)}1`, to: '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48', data: `0x70a08231${'0'.repeat(60)}1ecf` }, 'latest'],
    }),
    large: write('large.json', { jsonrpc: '2.0', id: 1, method: 'eth_getBlockReceipts', params: ['0x13a5f2c'] }),
    batch: write(
      'batch.json',
      Array.from({ length: 50 }, (_, i) => ({ jsonrpc: '2.0', id: i + 1, method: i % 2 ? 'eth_chainId' : 'eth_blockNumber', params: [] })),
    ),
    // The check before measuring; wrk's batch-distinct.lua makes the bodies it sends.
    batchDistinct: write(
      'batch-distinct.json',
      Array.from({ length: 50 }, (_, i) => ({
        jsonrpc: '2.0',
        id: i + 1,
        method: 'eth_getBalance',
        params: [`0x${(i + 1).toString(16).padStart(40, '0')}`, 'latest'],
      })),
    ),
  }
}

/** The HTTP scenarios of a run, with the targets each compares. */
export interface Bodies {
  small: string
  callsDistinct: string
  distinct: string
  large: string
  batch: string
  batchDistinct: string
}

export function httpScenarios(ctx: BenchContext, bodies: Bodies): HttpScenario[] {
  const gw = ['gateway', ...(ctx.opts.baseline ? [`gateway@${ctx.opts.baseline}`] : [])]
  const gwHttp = ['gateway-http-upstream', ...(ctx.opts.baseline ? [`gateway-http-upstream@${ctx.opts.baseline}`] : [])]
  const okResult = (r: { status: number; text: string }): string | undefined =>
    r.status !== 200 ? `HTTP ${r.status}: ${r.text.slice(0, 120)}` : r.text.includes('"result"') ? undefined : `no result: ${r.text.slice(0, 120)}`
  /** A batch's answer: 50 answers for its 50 calls. */
  const fiftyAnswers = (r: { status: number; text: string }): string | undefined => {
    const bad = okResult(r)
    if (bad) return bad
    const n = (JSON.parse(r.text) as unknown[]).length
    return n === 50 ? undefined : `${n} answers for 50 calls`
  }
  return [
    {
      name: 'small',
      what: 'eth_blockNumber, one call per request',
      bodyFile: bodies.small,
      targets: ['stub', 'nginx', 'node-proxy', ...gw, 'gateway-no-metering', ...gwHttp],
      connections: ctx.opts.connections,
      check: okResult,
    },
    {
      name: 'small-distinct',
      what: 'eth_getBalance of 1000 addresses in turn: no two calls in flight alike (no in-flight sharing)',
      bodyFile: bodies.distinct,
      script: 'distinct',
      // Over an HTTP-only node too (most providers' nodes): a distinct call cost there nearly twice
      // the CPU it costs over a WebSocket (session 8: 72-82 against 43-45 us, both loaded at once).
      targets: ['stub', 'nginx', 'node-proxy', ...gw, 'gateway-no-metering', ...gwHttp],
      connections: ctx.opts.connections,
      check: okResult,
    },
    {
      name: 'large',
      what: 'eth_getBlockReceipts, ~1 MB answer, no gzip',
      bodyFile: bodies.large,
      targets: ['stub', 'nginx', 'node-proxy', ...gw, ...gwHttp],
      connections: 16,
      check: (r) => okResult(r) ?? (r.text.length < 900_000 ? `answer of ${r.text.length} bytes` : undefined),
    },
    {
      name: 'large-gzip',
      what: 'eth_getBlockReceipts, ~1 MB answer, Accept-Encoding: gzip',
      bodyFile: bodies.large,
      headers: { 'Accept-Encoding': 'gzip' },
      targets: ['nginx', 'node-proxy', ...gw],
      connections: 16,
      check: (r) => okResult(r) ?? (r.encoding === 'gzip' ? undefined : `not gzip-encoded (${r.encoding})`),
    },
    {
      name: 'batch',
      what: 'a batch of 50 calls per request',
      bodyFile: bodies.batch,
      targets: ['stub', 'nginx', 'node-proxy', ...gw, ...gwHttp],
      connections: ctx.opts.connections,
      check: fiftyAnswers,
    },
    {
      // The batch above is 25 eth_blockNumber and 25 eth_chainId: the gateway answers its copies
      // from one call each (and eth_chainId from the cache) where nginx has the node answer all 50.
      // Here no two calls are alike: every target's node answers 50 calls per request.
      name: 'batch-distinct',
      what: 'a batch of 50 eth_getBalance of different addresses per request, no two calls alike in a batch or in flight',
      bodyFile: bodies.batchDistinct,
      script: 'batch-distinct',
      targets: ['stub', 'nginx', 'node-proxy', ...gw, ...gwHttp],
      connections: ctx.opts.connections,
      check: fiftyAnswers,
    },
  ]
}

/** The WebSocket scenario's load on `url` for `durationS`: eth_blockNumber, 16 sockets × 4 in flight, from its own process. */
export function wsLoad(url: string, durationS: number): Promise<WsLoadResult> {
  return runNodeJson<WsLoadResult>(join(import.meta.dirname, '..', 'load', 'ws-load.ts'), {
    url,
    method: 'eth_blockNumber',
    durationMs: durationS * 1000,
    warmupMs: 200,
  })
}

/** WebSocket request/response, closed loop; a target whose /ws answers 404 is skipped with a note. */
export async function runWsScenario(ctx: BenchContext): Promise<Row[]> {
  const rows: Row[] = []
  const candidates = ['stub', 'nginx', 'gateway', ...(ctx.opts.baseline ? [`gateway@${ctx.opts.baseline}`] : [])]
  const targets: Target[] = []
  for (const t of pickTargets(ctx, candidates)) {
    if (!t.ws) continue
    if (t.id.startsWith('gateway')) {
      // A real upgrade request: a plain GET of /ws is a 404 even where the endpoint exists
      // (which is how an earlier probe skipped every gateway here).
      const status = await upgradeStatus(t.ws)
      if (status !== 101) {
        ctx.notes.push(`ws/${t.id}: skipped, a WebSocket upgrade of /ws answered ${status} on this build`)
        continue
      }
    }
    targets.push(t)
  }
  ctx.log(`ws: eth_blockNumber over WebSocket, 16 sockets × 4 in flight — ${targets.map((t) => t.id).join(', ')}`)
  const load = (t: Target, durationS: number) => async (): Promise<LoadFigures> => {
    const r = await wsLoad(t.ws!, durationS)
    return { requests: r.requests, rps: r.rps, p50Us: r.p50Us, p99Us: r.p99Us, errors: r.errors }
  }
  try {
    if (ctx.opts.warmupS > 0) for (const t of targets) await load(t, ctx.opts.warmupS)()
    const samples = await interleave(targets, ctx.opts.rounds, (t) => measure(t, ctx.set.stubPid, load(t, ctx.opts.durationS)))
    for (const t of targets) rows.push(summarise('ws', t, samples.get(t.id)!))
  } catch (err) {
    ctx.notes.push(`ws: failed: ${(err as Error).message.split('\n')[0]}`)
  }
  return rows
}

/** The status a WebSocket upgrade request to `url` gets: 101 when the endpoint exists. */
function upgradeStatus(url: string): Promise<number | string> {
  return new Promise((resolve) => {
    const req = request(url.replace(/^ws/, 'http'), {
      headers: { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': randomBytes(16).toString('base64') },
    })
    req.on('upgrade', (res, socket) => {
      socket.destroy()
      resolve(res.statusCode ?? 101)
    })
    req.on('response', (res) => {
      res.resume()
      resolve(res.statusCode ?? 0)
    })
    req.on('error', (err) => resolve(err.message))
    req.end()
  })
}
