/**
 * Heavy-call scenarios (issue 7), standalone: `node --import tsx bench/scenarios-heavy.ts [--duration 5] [--rounds 3]`.
 * A real anvil filled with logs, gateways in this process (cache on, cache off), and wrk as the load
 * from its own process. Each scenario compares against named rivals in the same run:
 * - cache-hit: eth_getBlockByNumber of 120 finalized blocks of 25 transactions each (full
 *   transactions, ~25 KB answers) in turn — anvil directly, the gateway with the cache off (every
 *   call upstream; rotating blocks keep in-flight sharing out of it), the gateway with the cache on
 *   (all hits after one warm-up pass);
 * - getlogs-wide: eth_getLogs over the whole history (thousands of blocks and logs) — anvil in one
 *   call, the gateway splitting it into parallel chunks with the cache off, and with it on (chunks
 *   at or below the finalized block come from the cache).
 * Prints a table and writes bench/results/heavy.json. To plug into bench/run.ts (issue-bench): call
 * `runHeavyScenarios({ durationS, rounds, log })` from there and append its rows (scenario, target, rps,
 * p50Us, p99Us, errors) to the run's rows; it needs no stub and no other target.
 */
import { execFile } from 'node:child_process'
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { parseArgs } from 'node:util'
import pino from 'pino'
import { startAnvil } from '../harness/anvil.js'
import { deployLogEmitter, emitLogs } from '../harness/log-emitter.js'
import { parseConfig } from '../src/config/load.js'
import { startGateway } from '../src/main/start-gateway.js'
import type { RunningGateway } from '../src/main/running-gateway.js'
import { createAccount } from '../src/accounts/commands.js'
import { KeyCipher } from '../src/keys/key-cipher.js'
import { loadPlanCatalog } from '../src/plans/catalog.js'
import { systemClock } from '../actors/runtime/clock.js'

const run = promisify(execFile)

export interface HeavyRow {
  scenario: string
  target: string
  rps: number
  p50Us: number
  p99Us: number
  errors: number
  note?: string
}

/** wrk script: POST the bodies of BODY_FILE (one JSON request per line) in turn. */
const LUA = `wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local bodies = {}
for line in io.lines(os.getenv("BODY_FILE")) do bodies[#bodies + 1] = line end
local i = 0
request = function()
  i = i % #bodies + 1
  return wrk.format(nil, nil, nil, bodies[i])
end
`

/** wrk against `url` with the JSON body in `bodyFile`; requests per second and latency percentiles. */
async function wrk(url: string, bodyFile: string, script: string, durationS: number, connections: number): Promise<Omit<HeavyRow, 'scenario' | 'target'>> {
  const { stdout } = await run('wrk', ['-t', '1', '-c', String(connections), '-d', `${durationS}s`, '--latency', '-s', script, url], {
    env: { ...process.env, BODY_FILE: bodyFile },
  })
  const us = (re: RegExp): number => {
    const m = re.exec(stdout)
    if (!m) return Number.NaN
    const v = parseFloat(m[1])
    return Math.round(m[2] === 's' ? v * 1e6 : m[2] === 'ms' ? v * 1e3 : v)
  }
  const non2xx = /Non-2xx or 3xx responses: (\d+)/.exec(stdout)
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(stdout)
  return {
    rps: Math.round(parseFloat(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1] ?? 'NaN')),
    p50Us: us(/\s50%\s+([\d.]+)(us|ms|s)\b/),
    p99Us: us(/\s99%\s+([\d.]+)(us|ms|s)\b/),
    errors: Number(non2xx?.[1] ?? 0) + (socket ? socket.slice(1).reduce((a, b) => a + Number(b), 0) : 0),
  }
}

export async function runHeavyScenarios(opts: { durationS: number; rounds: number; log: (line: string) => void }): Promise<HeavyRow[]> {
  const tmp = mkdtempSync(join(tmpdir(), 'tollgate-heavy-bench-'))
  const script = join(tmp, 'post.lua')
  writeFileSync(script, LUA)
  const anvil = await startAnvil()
  const gateways: RunningGateway[] = []
  try {
    opts.log('filling anvil with logs (120 blocks of 25 logs, 40 empty blocks after each)…')
    const emitter = await deployLogEmitter(anvil)
    const logs = await emitLogs(anvil, emitter, { blocks: 120, perBlock: 25, gap: 40 })
    await anvil.rpc('anvil_mine', ['0x80'])
    const head = parseInt((await anvil.rpc('eth_blockNumber')).result, 16)
    const finalized = parseInt((await anvil.rpc('eth_getBlockByNumber', ['finalized', false])).result.number, 16)
    opts.log(`${logs} logs over ${head + 1} blocks; finalized block ${finalized}`)

    process.env.TOLLGATE_SECRET ??= 'bench-secret-0123456789abcdef0123456789abcdef'
    const start = async (name: string, cache: boolean): Promise<string> => {
      const config = parseConfig(
        {
          listen: { host: '127.0.0.1', port: 0 },
          admin: { listen: { host: '127.0.0.1', port: 0 } },
          dataDir: join(tmp, name),
          networks: {
            'eth-1': {
              chainId: 31337,
              upstreams: [
                { url: anvil.url, ws: anvil.wsUrl, kind: 'full' },
                { url: anvil.url, ws: anvil.wsUrl, kind: 'archive' },
              ],
            },
          },
          cache: { enabled: cache },
        },
        name,
      )
      const gw = await startGateway(config, { logger: pino({ level: 'silent' }) })
      gateways.push(gw)
      await gw.upstreams.waitForSockets(5_000)
      const { apiKey } = await createAccount(
        {
          log: gw.log,
          store: gw.store,
          catalog: loadPlanCatalog('default'),
          cipher: KeyCipher.fromSecret(process.env.TOLLGATE_SECRET!),
          clock: systemClock,
          projector: gw.projector,
        },
        { wallet: `0x${'5'.repeat(39)}${cache ? '1' : '2'}`, planId: 'private' },
      )
      return `${gw.http}/http/eth-1?apikey=${apiKey}`
    }
    const targets = { anvil: anvil.url, 'gateway-cache-off': await start('off', false), 'gateway-cache-on': await start('on', true) }

    const logBlocks = [
      ...new Set(
        ((await anvil.rpc('eth_getLogs', [{ fromBlock: '0x0', toBlock: 'latest' }])).result as Array<{ blockNumber: string }>).map((l) => l.blockNumber),
      ),
    ]
    const request = (method: string, params: unknown[]) => JSON.stringify({ jsonrpc: '2.0', id: 1, method, params })
    const scenarios: Record<string, { bodies: string[]; connections: number }> = {
      'cache-hit': { bodies: logBlocks.map((n) => request('eth_getBlockByNumber', [n, true])), connections: 32 },
      'getlogs-wide': { bodies: [request('eth_getLogs', [{ fromBlock: '0x0', toBlock: `0x${finalized.toString(16)}` }])], connections: 4 },
    }
    const rows: HeavyRow[] = []
    for (const [scenario, { bodies, connections }] of Object.entries(scenarios)) {
      const file = join(tmp, `${scenario}.jsonl`)
      writeFileSync(file, bodies.join('\n') + '\n')
      // Every body once first: checks the answers, and fills the cache of the cache-on target.
      for (const [target, url] of Object.entries(targets)) {
        for (const body of bodies) {
          const check = (await (await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).json()) as { result?: unknown }
          if (check.result === undefined || check.result === null) throw new Error(`${scenario}/${target}: no result: ${JSON.stringify(check).slice(0, 200)}`)
        }
      }
      await new Promise((r) => setTimeout(r, 500))
      // Targets interleaved round by round (A B C A B C …), medians: a busy neighbour hits all alike.
      const samples = new Map<string, Array<Omit<HeavyRow, 'scenario' | 'target'>>>()
      for (let round = 0; round < opts.rounds; round++) {
        for (const [target, url] of Object.entries(targets)) {
          opts.log(`${scenario}: ${target}, round ${round + 1}/${opts.rounds}, ${opts.durationS} s, ${connections} connections`)
          const list = samples.get(target) ?? []
          list.push(await wrk(url, file, script, opts.durationS, connections))
          samples.set(target, list)
        }
      }
      for (const [target, list] of samples) {
        rows.push({
          scenario,
          target,
          rps: median(list.map((x) => x.rps)),
          p50Us: median(list.map((x) => x.p50Us)),
          p99Us: median(list.map((x) => x.p99Us)),
          errors: list.reduce((a, x) => a + x.errors, 0),
        })
      }
    }
    return rows
  } finally {
    for (const gw of gateways) await gw.close()
    await anvil.stop()
    rmSync(tmp, { recursive: true, force: true })
  }
}

function median(xs: number[]): number {
  const v = [...xs].sort((a, b) => a - b)
  const m = Math.floor(v.length / 2)
  return v.length % 2 ? v[m] : Math.round((v[m - 1] + v[m]) / 2)
}

function table(rows: HeavyRow[]): string {
  const out = ['| scenario | target | req/s | p50 | p99 | errors | vs cache off |', '|---|---|---|---|---|---|---|']
  for (const r of rows) {
    const off = rows.find((x) => x.scenario === r.scenario && x.target === 'gateway-cache-off')
    const ratio = off && off.rps > 0 ? `${(r.rps / off.rps).toFixed(2)}×` : ''
    out.push(`| ${r.scenario} | ${r.target} | ${r.rps} | ${(r.p50Us / 1000).toFixed(2)} ms | ${(r.p99Us / 1000).toFixed(2)} ms | ${r.errors} | ${ratio} |`)
  }
  return out.join('\n')
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { duration: { type: 'string', default: '5' }, rounds: { type: 'string', default: '3' } } })
  const rows = await runHeavyScenarios({
    durationS: Number(values.duration),
    rounds: Number(values.rounds),
    log: (l) => process.stderr.write(`[heavy] ${l}\n`),
  })
  process.stdout.write(table(rows) + '\n')
  const dir = join(import.meta.dirname, 'results')
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, 'heavy.json'), JSON.stringify({ date: new Date().toISOString(), rows }, null, 2) + '\n')
  process.exit(0)
}
