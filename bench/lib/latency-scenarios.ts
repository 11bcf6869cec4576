import { join } from 'node:path'
import { interleave, measure, summarise, type LoadFigures, type Row } from './measure.js'
import { lastJsonLine, nodeScriptArgs, runToEnd } from './processes.js'
import { onCpu } from './cpu-pinning.js'
import { runWrk } from './wrk.js'
import type { BenchContext } from './context.js'
import type { Target } from './targets.js'
import type { OpenLoopResult } from '../load/open-loop.js'

const OPEN_LOOP = join(import.meta.dirname, '..', 'load', 'open-loop.ts')

/**
 * bench/load/open-loop.ts in its own process: `rate` requests a second of `bodyFile` to the
 * target, after `warmupS` unmeasured; on CPU `cpu` only (taskset), when given.
 */
export async function openLoop(t: Target, bodyFile: string, rate: number, durationS: number, warmupS: number, cpu?: string): Promise<OpenLoopResult> {
  const arg = { url: t.http, bodyFile, rate, durationMs: durationS * 1000, warmupMs: warmupS * 1000, connections: 100 }
  return lastJsonLine<OpenLoopResult>(await runToEnd(...onCpu(cpu, process.execPath, nodeScriptArgs(OPEN_LOOP, arg))))
}

/** An open-loop result as a row's figures: every request not answered 2xx counts as an error. */
export function figures(r: OpenLoopResult): LoadFigures {
  return {
    requests: r.completed,
    rps: r.achievedRps,
    p50Us: r.p50Us,
    p99Us: r.p99Us,
    errors: r.statusErrors + r.unanswered,
    extra: {
      rate: r.rate,
      p95Us: r.p95Us,
      serviceP50Us: r.serviceP50Us,
      serviceP95Us: r.serviceP95Us,
      serviceP99Us: r.serviceP99Us,
      generatorLagP99Us: r.lagP99Us,
      p999Us: r.p999Us,
      connectionsUsed: r.connectionsUsed,
      connectionsClosedByTarget: r.connectionsClosedByTarget,
    },
  }
}

/**
 * Small calls at a fixed rate (25/50/75% of the gateway's maximum small-call rate of this run),
 * open loop, latency from the due time: the direct path, the gateway and the rivals at the SAME
 * absolute rates. The gateway's added latency is its p99 minus the direct path's.
 */
export async function runFixedRate(ctx: BenchContext, smallBody: string, gatewayMaxRps: number): Promise<Row[]> {
  const ids = ctx.opts.quick ? ['stub', 'gateway'] : ['stub', 'gateway', 'nginx', 'node-proxy']
  const targets = ids.flatMap((id) => (ctx.set.targets.has(id) ? [ctx.set.targets.get(id)!] : []))
  const shares = ctx.opts.quick ? [50] : [25, 50, 75]
  const rows: Row[] = []
  for (const share of shares) {
    const rate = Math.max(100, Math.round((gatewayMaxRps * share) / 100))
    const name = `fixed-rate-${share}%`
    ctx.log(`${name}: eth_blockNumber at ${rate} req/s (open loop, ${share}% of the gateway's max ${gatewayMaxRps}) — ${targets.map((t) => t.id).join(', ')}`)
    const warm = Math.min(1, Math.max(0.3, ctx.opts.warmupS))
    const samples = await interleave(targets, ctx.opts.rounds, (t) =>
      measure(t, ctx.set.stubPid, async () => figures(await openLoop(t, smallBody, rate, ctx.opts.durationS, warm))),
    )
    for (const t of targets) rows.push(summarise(name, t, samples.get(t.id)!))
  }
  return rows
}

/**
 * gzip must not block the event loop for other clients: p99 of small calls at a modest fixed
 * rate, alone and while 8 connections pull ~1 MB gzip answers from the same target as fast as
 * they can. A compression on the event loop would add its whole duration (tens of ms for 1 MB)
 * to the small calls queued behind it.
 */
export async function runGzipIsolation(ctx: BenchContext, bodies: { small: string; large: string }): Promise<Row[]> {
  const wrk = ctx.wrk
  if (!wrk) {
    ctx.notes.push('gzip-isolation: skipped, wrk is not installed')
    return []
  }
  const ids = ctx.opts.quick ? ['gateway'] : ['nginx', 'node-proxy', 'gateway', ...(ctx.opts.baseline ? [`gateway@${ctx.opts.baseline}`] : [])]
  const targets = ids.flatMap((id) => (ctx.set.targets.has(id) ? [ctx.set.targets.get(id)!] : []))
  const rate = 500
  ctx.log(`gzip-isolation: small calls at ${rate} req/s, alone and beside 8 connections of 1 MB gzip answers — ${targets.map((t) => t.id).join(', ')}`)
  const warm = Math.min(1, Math.max(0.3, ctx.opts.warmupS))
  // A Node target also reports its own event-loop delay over the probe (bench/targets/control.ts).
  const withLoopDelay = async (t: Target, run: () => Promise<LoadFigures>): Promise<LoadFigures> => {
    await t.ask?.('eld')
    const f = await run()
    const eld = await t.ask?.('eld')
    return eld ? { ...f, extra: { ...f.extra, ...eld } } : f
  }
  const alone = await interleave(targets, ctx.opts.rounds, (t) =>
    measure(t, ctx.set.stubPid, () => withLoopDelay(t, async () => figures(await openLoop(t, bodies.small, rate, ctx.opts.durationS, warm)))),
  )
  const flowing = await interleave(targets, ctx.opts.rounds, (t) =>
    measure(t, ctx.set.stubPid, async () => {
      const background = runWrk(wrk, {
        url: t.http,
        bodyFile: bodies.large,
        durationS: ctx.opts.durationS + warm + 1,
        connections: 8,
        headers: { 'Accept-Encoding': 'gzip' },
      })
      await new Promise((r) => setTimeout(r, 300))
      const probe = await withLoopDelay(t, async () => figures(await openLoop(t, bodies.small, rate, ctx.opts.durationS, warm)))
      const bg = await background
      return { ...probe, extra: { ...probe.extra, gzipAnswersPerSec: bg.rps } }
    }),
  )
  const rows: Row[] = []
  for (const t of targets) {
    rows.push(summarise(`small@${rate}/s alone`, t, alone.get(t.id)!))
    rows.push(summarise(`small@${rate}/s + gzip flow`, t, flowing.get(t.id)!))
  }
  return rows
}
