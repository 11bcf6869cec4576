/**
 * How the choice of nodes shows in a client's latency (issue 32), each figure beside its reference
 * in the same run: reads one at a time, as a client waiting for each answer would send them,
 * through a gateway in its own process, to stub nodes in their own processes (a stub answers
 * at once, or `--slow-ms` late).
 *
 * - slow-node: one fast node alone, then the same fast node beside a slow one (300 ms). Before the
 *   score-based choice, every other read waited for the slow node (p50 303 ms).
 * - consensus: three fast nodes, without and with `consensus: { participants: 3, agreement: 2 }`:
 *   what asking three nodes and comparing their answers adds.
 * - noisy-neighbour (issue 30): one node with 4 workers whose traces take 250 ms; tenant B reads
 *   balances one at a time, alone and then while tenant A sends distinct traces from 48
 *   connections; without and with `maxInFlight: 4` on the node.
 *
 * Run: `npm run bench:upstream [-- --reads 2000 --slow-ms 300 --results upstream]`; writes
 * bench/results/<results>.json and prints the table.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { request } from 'undici'
import { nodeScriptArgs, startReady, type Started } from './lib/processes.js'
import { startGatewayTarget } from './lib/targets.js'

const { values } = parseArgs({
  options: {
    reads: { type: 'string', default: '2000' },
    'slow-ms': { type: 'string', default: '300' },
    results: { type: 'string', default: 'upstream' },
  },
})
const READS = Number(values.reads)
const SLOW_MS = Number(values['slow-ms'])
const BENCH = import.meta.dirname
const catalog = join(BENCH, 'targets', 'bench-plans.json')
const log = (line: string): void => void process.stderr.write(`${line}\n`)

async function stub(name: string, behaviour: number | { workers: number; slow: Record<string, number> }): Promise<Started<{ port: number }>> {
  const arg = typeof behaviour === 'number' ? String(behaviour) : JSON.stringify(behaviour)
  return startReady(name, process.execPath, [...nodeScriptArgs(join(BENCH, 'stub', 'stub-upstream.ts'), 0), arg])
}

interface Row {
  scenario: string
  setup: string
  reads: number
  p50Ms: number
  p90Ms: number
  p99Ms: number
  maxMs: number
}

const BODY = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_getBalance', params: ['0x00000000219ab540356cbb839cbe05303d7705fa', 'latest'] })

/** One read, its latency in ms. */
async function readOnce(url: string): Promise<number> {
  const t0 = performance.now()
  const res = await request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: BODY })
  const text = await res.body.text()
  if (res.statusCode !== 200 || !text.includes('"result"')) throw new Error(`read failed: ${res.statusCode} ${text.slice(0, 200)}`)
  return performance.now() - t0
}

function percentiles(ms: number[]): Omit<Row, 'scenario' | 'setup'> {
  ms.sort((a, b) => a - b)
  const at = (q: number): number => Math.round(ms[Math.min(ms.length - 1, Math.floor(q * ms.length))] * 100) / 100
  return { reads: ms.length, p50Ms: at(0.5), p90Ms: at(0.9), p99Ms: at(0.99), maxMs: at(1) }
}

/** `reads` reads in a row (each waits for the previous answer) after a warm-up; latency percentiles. */
async function readsInARow(url: string, reads: number, opts: { warmUp?: number; untilMs?: number } = {}): Promise<Omit<Row, 'scenario' | 'setup'>> {
  // Warm-up: every node is measured (the chooser scores nodes by their latency) and sockets are open.
  for (let i = 0; i < (opts.warmUp ?? 200); i++) await readOnce(url)
  const ms: number[] = []
  const end = opts.untilMs === undefined ? Number.POSITIVE_INFINITY : performance.now() + opts.untilMs
  for (let i = 0; i < reads && performance.now() < end; i++) ms.push(await readOnce(url))
  return percentiles(ms)
}

/**
 * Tenant B's reads alone, then while tenant A floods distinct traces from 48 connections (reads
 * for at most 15 s: without a capacity each read waits seconds); A's calls served and refused.
 */
async function noisyNeighbour(setup: string, node: Started<{ port: number }>, maxInFlight: number | undefined): Promise<Row[]> {
  const { process: gw } = await startGatewayTarget('noisy', setup, {
    stubHttp: '',
    catalog,
    accounts: 2,
    nodes: [{ http: `http://127.0.0.1:${node.info.port}`, name: 'node', maxInFlight }],
  })
  const info = gw.info as unknown as { port: number; apiKeys: string[] }
  const url = (key: string) => `http://127.0.0.1:${info.port}/http/eth-1?apikey=${key}`
  try {
    log(`noisy-neighbour: ${setup}…`)
    const alone = { scenario: 'noisy-neighbour', setup: `${setup}: B alone`, ...(await readsInARow(url(info.apiKeys[1]), Math.min(READS, 500))) }
    let flooding = true
    let n = 0
    const flood = { served: 0, refused: 0, failed: 0 }
    const flooder = async (): Promise<void> => {
      while (flooding) {
        const value = `0x${(++n).toString(16)}`
        const body = JSON.stringify({
          jsonrpc: '2.0',
          id: n,
          method: 'debug_traceCall',
          params: [{ to: '0x00000000219ab540356cbb839cbe05303d7705fa', value }, 'latest'],
        })
        const res = await request(url(info.apiKeys[0]), { method: 'POST', headers: { 'content-type': 'application/json' }, body })
        const text = await res.body.text()
        if (res.statusCode === 200 && text.includes('"result"')) flood.served++
        else if (res.statusCode === 429 || res.statusCode === 503) flood.refused++
        else flood.failed++
      }
    }
    const flooders = Array.from({ length: 48 }, flooder)
    await new Promise((r) => setTimeout(r, 1_000))
    const during = {
      scenario: 'noisy-neighbour',
      setup: `${setup}: B during A's flood`,
      ...(await readsInARow(url(info.apiKeys[1]), Math.min(READS, 500), { warmUp: 0, untilMs: 15_000 })),
    }
    flooding = false
    await Promise.all(flooders)
    log(`  B alone p99 ${alone.p99Ms} ms; during the flood p50 ${during.p50Ms}, p99 ${during.p99Ms} ms; A: ${JSON.stringify(flood)}`)
    return [alone, { ...during, flood } as Row]
  } finally {
    await gw.stop()
  }
}

async function measure(
  scenario: string,
  setup: string,
  nodes: Array<Started<{ port: number }>>,
  extra: { consensus?: { participants: number; agreement: number } } = {},
): Promise<Row> {
  const { process: gw, target } = await startGatewayTarget(scenario, setup, {
    stubHttp: '',
    catalog,
    nodes: nodes.map((n) => ({ http: `http://127.0.0.1:${n.info.port}`, name: n.name })),
    ...extra,
  })
  try {
    log(`${scenario}: ${setup}…`)
    const row = { scenario, setup, ...(await readsInARow(target.http, READS)) }
    log(`  p50 ${row.p50Ms} ms, p99 ${row.p99Ms} ms`)
    return row
  } finally {
    await gw.stop()
  }
}

const fast = await Promise.all([stub('fast-1', 0), stub('fast-2', 0), stub('fast-3', 0)])
const slow = await stub('slow', SLOW_MS)
const workers = await stub('node-4-workers', { workers: 4, slow: { debug_traceCall: 250 } })
const rows: Row[] = []
try {
  rows.push(await measure('slow-node', 'one fast node alone', [fast[0]]))
  rows.push(await measure('slow-node', `the fast node and a ${SLOW_MS} ms node`, [fast[0], slow]))
  rows.push(await measure('consensus', 'three fast nodes, no consensus', fast))
  rows.push(await measure('consensus', 'three fast nodes, consensus 2 of 3', fast, { consensus: { participants: 3, agreement: 2 } }))
  rows.push(...(await noisyNeighbour('no maxInFlight', workers, undefined)))
  rows.push(...(await noisyNeighbour('maxInFlight 4', workers, 4)))
} finally {
  await Promise.all([...fast, slow, workers].map((s) => s.stop()))
}

const delta = (scenario: string): { p50Ms: number; p99Ms: number } => {
  const [ref, other] = rows.filter((r) => r.scenario === scenario)
  return { p50Ms: Math.round((other.p50Ms - ref.p50Ms) * 100) / 100, p99Ms: Math.round((other.p99Ms - ref.p99Ms) * 100) / 100 }
}
const result = { reads: READS, slowMs: SLOW_MS, rows, added: { slowNode: delta('slow-node'), consensus: delta('consensus') } }
writeFileSync(join(BENCH, 'results', `${values.results}.json`), `${JSON.stringify(result, null, 2)}\n`)
const table = [
  '| scenario | setup | reads | p50 ms | p90 ms | p99 ms | max ms |',
  '|---|---|---|---|---|---|---|',
  ...rows.map(
    (r) =>
      `| ${r.scenario} | ${r.setup} | ${r.reads} | ${r.p50Ms} | ${r.p90Ms} | ${r.p99Ms} | ${r.maxMs} |${'flood' in r ? ` A: ${JSON.stringify(r.flood)}` : ''}`,
  ),
  '',
  `added by the slow node: p50 ${result.added.slowNode.p50Ms} ms, p99 ${result.added.slowNode.p99Ms} ms; by consensus: p50 ${result.added.consensus.p50Ms} ms, p99 ${result.added.consensus.p99Ms} ms`,
]
process.stdout.write(`${table.join('\n')}\n`)
process.exit(0)
