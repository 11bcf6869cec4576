/**
 * What the gateway spends to deliver subscription notifications: notifications delivered per
 * CPU-second of the gateway, this tree against a baseline commit, in one run, alternating. The
 * case is issue 38's: one key's connections each holding many identical subscriptions, so every
 * head the node sends is fanned out to connections × subscriptions copies.
 *
 * Run: node --import tsx bench/ws-notification-cost.ts [--baseline REF] [--connections 10]
 *        [--subs 50] [--head-ms 50] [--seconds 5] [--rounds 2] [--results NAME]
 *
 * The stub node (bench/ws-stub-node.ts) sends a head every --head-ms; each gateway (compiled by
 * tsc, as `tollgate start` runs it) has no notification budget, so every copy is delivered. The
 * clients (the `ws` library) are in this process; only the gateway's CPU (/proc) is counted.
 */
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import WebSocket from 'ws'
import { machine } from './lib/machine.js'
import { cpuMs, runToEnd, startReady } from './lib/processes.js'
import { compiledGateway } from './lib/targets.js'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const { values: flags } = parseArgs({
  options: {
    baseline: { type: 'string', default: 'HEAD' },
    connections: { type: 'string', default: '10' },
    subs: { type: 'string', default: '50' },
    'head-ms': { type: 'string', default: '50' },
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '2' },
    results: { type: 'string', default: 'ws-notification-cost' },
  },
})
const CONNECTIONS = Number(flags.connections)
const SUBS = Number(flags.subs)
const SECONDS = Number(flags.seconds)
const ROUNDS = Number(flags.rounds)
if (!/^[\w.-]+$/.test(flags.results!)) throw new Error(`--results ${flags.results}: a file name without a folder`)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** CONNECTIONS sockets, each subscribed SUBS times to newHeads; counts what arrives. */
async function subscribers(url: string): Promise<{ sockets: WebSocket[]; received: () => number }> {
  let received = 0
  const sockets = await Promise.all(
    Array.from(
      { length: CONNECTIONS },
      () =>
        new Promise<WebSocket>((resolve, reject) => {
          const ws = new WebSocket(url)
          ws.once('open', () => resolve(ws))
          ws.once('error', reject)
        }),
    ),
  )
  await Promise.all(
    sockets.map(
      (ws) =>
        new Promise<void>((resolve) => {
          let answered = 0
          ws.on('message', (data) => {
            const text = data.toString()
            if (text.includes('"eth_subscription"')) received++
            else if (++answered === SUBS) resolve()
          })
          for (let i = 0; i < SUBS; i++) ws.send(JSON.stringify({ jsonrpc: '2.0', id: i, method: 'eth_subscribe', params: ['newHeads'] }))
        }),
    ),
  )
  return { sockets, received: () => received }
}

async function measure(dist: string, stubPort: number, dir: string): Promise<{ delivered: number; cpuMs: number; perCpuSecond: number }> {
  const config = {
    listen: { host: '127.0.0.1', port: 0 },
    admin: { listen: { host: '127.0.0.1', port: 0 } },
    dataDir: join(dir, `data-${randomBytes(4).toString('hex')}`),
    networks: { 'eth-1': { chainId: 1, upstreams: [{ url: `http://127.0.0.1:${stubPort}`, ws: `ws://127.0.0.1:${stubPort}`, kind: 'full' }] } },
    // Not what is measured: every copy is delivered (no budget), nothing refused.
    ws: { maxSubscriptionsPerConnection: SUBS, messagesPerSecond: 100_000_000, notificationUnitsPerSecond: null },
  }
  const configPath = join(dir, `config-${randomBytes(4).toString('hex')}.json`)
  writeFileSync(configPath, JSON.stringify(config))
  const env = { TOLLGATE_SECRET: randomBytes(32).toString('hex'), LOG_LEVEL: 'info' }
  const main = join(dist, 'src', 'cli', 'main.js')
  const gw = await startReady<{ ws: string }>('gateway', process.execPath, [main, 'start', '--config', configPath], {
    env,
    readyWhen: (line) => line.msg === 'ready',
  })
  try {
    const created = await runToEnd(
      process.execPath,
      [main, 'accounts', 'create', '--config', configPath, '--wallet', `0x${randomBytes(20).toString('hex')}`, '--plan', 'private'],
      { ...process.env, ...env, LOG_LEVEL: 'warn' },
    )
    const apiKey = JSON.parse(created.trim().split('\n').at(-1)!).apiKey as string
    const { sockets, received } = await subscribers(`${gw.info.ws}/ws/eth-1?apikey=${apiKey}`)
    await sleep(1_000) // warm-up, not measured
    const cpu0 = cpuMs(gw.pid)
    const n0 = received()
    await sleep(SECONDS * 1_000)
    const cpu = cpuMs(gw.pid) - cpu0
    const delivered = received() - n0
    for (const ws of sockets) ws.terminate()
    return { delivered, cpuMs: cpu, perCpuSecond: Math.round((delivered * 1000) / cpu) }
  } finally {
    await gw.stop()
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-notification-cost-'))
  const stub = await startReady<{ port: number }>(
    'stub node',
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'bench', 'ws-stub-node.ts'), '--head-ms', flags['head-ms']!],
    {
      readyWhen: (line) => typeof line.port === 'number',
    },
  )
  try {
    const trees = { baseline: await compiledGateway(flags.baseline), current: await compiledGateway() }
    const runs: Record<'baseline' | 'current', Array<Awaited<ReturnType<typeof measure>>>> = { baseline: [], current: [] }
    for (let r = 0; r < ROUNDS; r++) {
      for (const which of r % 2 === 0 ? (['baseline', 'current'] as const) : (['current', 'baseline'] as const)) {
        const m = await measure(trees[which], stub.info.port, dir)
        runs[which].push(m)
        console.log(`${which}: ${m.delivered} notifications, ${m.cpuMs} ms of CPU, ${m.perCpuSecond}/CPU-s (load ${loadavg()[0].toFixed(2)})`)
      }
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
    const b = median(runs.baseline.map((m) => m.perCpuSecond))
    const c = median(runs.current.map((m) => m.perCpuSecond))
    console.log(`notifications per CPU-second: baseline ${b}, this tree ${c}, ratio ${(c / b).toFixed(2)}`)
    const results = {
      machine: await machine(),
      options: { baseline: flags.baseline, connections: CONNECTIONS, subs: SUBS, headMs: Number(flags['head-ms']), seconds: SECONDS, rounds: ROUNDS },
      runs,
      medianPerCpuSecond: { baseline: b, current: c, ratio: c / b },
    }
    writeFileSync(join(ROOT, 'bench', 'results', `${flags.results}.json`), `${JSON.stringify(results, null, 2)}\n`)
  } finally {
    await stub.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}

await main()
