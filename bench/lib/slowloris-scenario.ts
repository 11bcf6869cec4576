import { loadavg } from 'node:os'
import { join } from 'node:path'
import { interleave, measure, median, summarise, type Row, type Sample } from './measure.js'
import { figures, openLoop } from './latency-scenarios.js'
import { startNodeScript } from './processes.js'
import type { BenchContext } from './context.js'
import type { Target } from './targets.js'
import type { SlowlorisStats } from '../load/slowloris.js'

const SLOWLORIS = join(import.meta.dirname, '..', 'load', 'slowloris.ts')

/** Issue 11's hostile input: 500 sockets sending a request's headers a byte a second. */
export const SLOWLORIS_SOCKETS = 500
/** The normal calls beside them: small calls at a fixed rate, far below any target's maximum here. */
export const SLOWLORIS_RATE = 1000
/** Issue 11: the normal calls keep a p95 under 200 ms while the slowloris sockets drip. */
export const SLOWLORIS_P95_GOAL_US = 200_000
/** The two rows of each target: the same load without and with the slowloris sockets. */
export const SLOWLORIS_ROWS = {
  without: `small@${SLOWLORIS_RATE}/s, no slowloris`,
  with: `small@${SLOWLORIS_RATE}/s + ${SLOWLORIS_SOCKETS} slowloris`,
} as const

/**
 * The `slowloris` scenario (issue 11): small calls at 1,000/s, open loop (latency from the due
 * time), against the gateway and nginx, once alone and once while 500 sockets from another process
 * send headers a byte a second. The sockets are open and dripping before the load starts and keep
 * dripping through it; one the target closes is opened again, as an attacker does. Both conditions
 * of every target are interleaved within each round (gateway alone, gateway with, nginx alone,
 * nginx with; then the other way round), so that the shared machine's drift hits all alike.
 */
export async function runSlowlorisScenario(ctx: BenchContext, smallBody: string): Promise<Row[]> {
  const ids = ctx.opts.quick ? ['gateway'] : ['gateway', 'nginx']
  const targets = ids.flatMap((id) => (ctx.set.targets.has(id) ? [ctx.set.targets.get(id)!] : []))
  if (targets.length === 0) {
    ctx.notes.push('slowloris: skipped, no gateway nor nginx in this run')
    return []
  }
  const loadAtStart = loadavg().map((x) => Math.round(x * 100) / 100)
  ctx.log(
    `slowloris: eth_blockNumber at ${SLOWLORIS_RATE} req/s (open loop), without and with ${SLOWLORIS_SOCKETS} sockets ` +
      `sending headers a byte a second — ${targets.map((t) => t.id).join(', ')}`,
  )
  const warm = Math.min(1, Math.max(0.3, ctx.opts.warmupS))
  const load = (t: Target) => async () => figures(await openLoop(t, smallBody, SLOWLORIS_RATE, ctx.opts.durationS, warm))
  // Each condition of a target as a target of its own, so that interleave alternates the conditions too.
  const runs = targets.flatMap((t) => [
    { ...t, id: `${t.id} without` },
    { ...t, id: `${t.id} with` },
  ])
  const samples = await interleave(runs, ctx.opts.rounds, (run) =>
    run.id.endsWith(' with') ? withSlowloris(ctx, run, () => measure(run, ctx.set.stubPid, load(run))) : measure(run, ctx.set.stubPid, load(run)),
  )
  const loadAtEnd = loadavg().map((x) => Math.round(x * 100) / 100)
  const machine = `load average ${JSON.stringify(loadAtStart)} at the scenario's start, ${JSON.stringify(loadAtEnd)} at its end`
  const rows: Row[] = []
  for (const t of targets) {
    const without = samples.get(`${t.id} without`)!
    const withIt = samples.get(`${t.id} with`)!
    rows.push(summarise(SLOWLORIS_ROWS.without, t, without, machine))
    rows.push(summarise(SLOWLORIS_ROWS.with, t, withIt, `${machine}; ${socketsNote(withIt)}`))
    ctx.notes.push(`slowloris/${t.id}: ${socketsNote(withIt)}`)
  }
  ctx.notes.push(`slowloris: ${machine} (2 cores: the target, the stub, the load generator and the slowloris process share them)`)
  return rows
}

/** Start the slowloris process against `t`, let every socket drip a byte more, run `measure`, and add what the sockets saw. */
async function withSlowloris(ctx: BenchContext, t: Target, run: () => Promise<Sample>): Promise<Sample> {
  const slow = await startNodeScript<{ open: number }>('slowloris', SLOWLORIS, { url: t.http, sockets: SLOWLORIS_SOCKETS })
  try {
    if (slow.info.open < SLOWLORIS_SOCKETS) ctx.notes.push(`slowloris/${t.id}: only ${slow.info.open} of ${SLOWLORIS_SOCKETS} sockets opened`)
    // A second's drip before the load: every socket is in the middle of its headers when the first call is due.
    await new Promise((r) => setTimeout(r, 1000))
    await slow.ask!('stats') // from here on, the figures cover the load's run only
    const sample = await run()
    const stats = (await slow.ask!('stats')) as unknown as SlowlorisStats
    return { ...sample, extra: { ...sample.extra, ...stats } }
  } finally {
    await slow.stop()
  }
}

/** What the slowloris sockets went through during the load, medians over rounds. */
function socketsNote(rounds: Sample[]): string {
  const med = (k: keyof SlowlorisStats): number => median(rounds.map((s) => s.extra?.[k] ?? Number.NaN))
  const closed = med('slowlorisClosedByServer')
  return (
    `${SLOWLORIS_SOCKETS} sockets from their own process, a byte a second each; during the load (medians of ${rounds.length} round(s)): ` +
    `at least ${med('slowlorisOpenMin')} open, ${closed} closed by the target and opened again ` +
    `(${med('slowlorisReopened')}), ${med('slowlorisAnswered')} answered, ${med('slowlorisConnectErrors')} connections refused` +
    // uWebSockets.js closes a socket whose headers are not complete 8 to 12 s after it opened; nginx after 60 s.
    (closed === 0 ? ' (none closed while the load ran: a round longer than the header time-out also measures the reconnections)' : '')
  )
}
