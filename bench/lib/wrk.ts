import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { runToEnd } from './processes.js'

/** What wrk measured (closed loop: latency is per answer, not per intended send). */
export interface WrkResult {
  requests: number
  durationUs: number
  bytes: number
  errors: number
  statusErrors: number
  rps: number
  p50Us: number
  p99Us: number
}

export function findWrk(): string | undefined {
  return ['/usr/bin/wrk', '/usr/local/bin/wrk'].find((p) => existsSync(p))
}

const SCRIPTS = {
  post: join(import.meta.dirname, '..', 'load', 'post.lua'),
  distinct: join(import.meta.dirname, '..', 'load', 'distinct.lua'),
  'batch-distinct': join(import.meta.dirname, '..', 'load', 'batch-distinct.lua'),
  'calls-distinct': join(import.meta.dirname, '..', 'load', 'calls-distinct.lua'),
}

/**
 * wrk in its own process, POSTing the body file; one thread (the machine has 2 cores: the other
 * belongs to the target), `connections` keep-alive connections.
 */
export async function runWrk(
  wrk: string,
  o: {
    url: string
    bodyFile: string
    durationS: number
    connections: number
    headers?: Record<string, string>
    script?: keyof typeof SCRIPTS
    /** Run wrk on these CPUs only (`taskset -c`, e.g. "1"): the other cores stay for the target. */
    cpus?: string
  },
): Promise<WrkResult> {
  // wrk takes whole seconds only.
  const args = ['-t1', `-c${o.connections}`, `-d${Math.max(1, Math.round(o.durationS))}s`, '--timeout', '10s', '-s', SCRIPTS[o.script ?? 'post']]
  for (const [k, v] of Object.entries(o.headers ?? {})) args.push('-H', `${k}: ${v}`)
  args.push(o.url)
  const env = { BENCH_BODY_FILE: o.bodyFile }
  const out = o.cpus === undefined ? await runToEnd(wrk, args, env) : await runToEnd('taskset', ['-c', o.cpus, wrk, ...args], env)
  const line = out.split('\n').find((l) => l.startsWith('BENCH_JSON '))
  if (!line) throw new Error(`wrk printed no result: ${out.slice(0, 500)}`)
  const r = JSON.parse(line.slice('BENCH_JSON '.length)) as Record<string, number>
  return {
    requests: r.requests,
    durationUs: r.durationUs,
    bytes: r.bytes,
    errors: r.connectErrors + r.readErrors + r.writeErrors + r.timeouts,
    statusErrors: r.statusErrors,
    rps: Math.round((r.requests * 1e6) / r.durationUs),
    p50Us: r.p50Us,
    p99Us: r.p99Us,
  }
}
