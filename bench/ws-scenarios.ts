/**
 * WebSocket scenarios of the benchmark (issue 5), each compared in the same run with a named
 * baseline, the stub node served directly:
 *  1. messages per second: pipelined eth_chainId over a few connections (A B A B rounds);
 *  2. memory per idle connection with N connections open (RSS growth / N, gateway vs the stub,
 *     a bare uWS server);
 *  3. time for one head to reach N subscribers (p50, p99, max of arrival − the stub's send time),
 *     the N sockets spread over K client processes (bench/load/ws-subscribers.ts), for each K of
 *     --client-processes: one process reading 10,000 sockets in turn times itself as much as the
 *     server (K = 1 keeps that mode for comparison).
 * The gateway runs as `tollgate start` in its own process, the stub (bench/ws-stub-node.ts, which
 * sends a head every --head-ms) in another, the clients here and in the subscriber processes.
 * Apart from bench/run.ts: it needs the WebSocket stub with heads and the gateway's WebSocket
 * limits raised. Writes bench/results/ws-scenarios.json (or NAME.json with --results NAME).
 *
 * Run: npm run bench:ws -- [--quick] [--connections 10000] [--client-processes 1,4] [--seconds 5] [--rounds 3]
 *        [--heads 10] [--head-ms 500] [--only messages,memory,fanout] [--profile] [--results NAME]
 * (--profile: the gateway runs under --cpu-prof; its top costs go to bench/results/profile-ws-<scenarios>.txt.)
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { randomBytes } from 'node:crypto'
import { parseArgs } from 'node:util'
import WebSocket from 'ws'
import { fanOut, type FanOutResult } from './lib/ws-fanout.js'
import { formatProfile, summariseProfile } from './lib/cpu-profile.js'
import { machine } from './lib/machine.js'
import { compiledGateway } from './lib/targets.js'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const { values: flags } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    connections: { type: 'string' },
    seconds: { type: 'string' },
    rounds: { type: 'string' },
    heads: { type: 'string' },
    'head-ms': { type: 'string' },
    'client-processes': { type: 'string' },
    only: { type: 'string' },
    profile: { type: 'boolean', default: false },
    results: { type: 'string' },
  },
})
const quick = flags.quick === true
const N = Number(flags.connections ?? (quick ? 1000 : 10_000))
const SECONDS = Number(flags.seconds ?? (quick ? 2 : 5))
const ROUNDS = Number(flags.rounds ?? (quick ? 1 : 3))
const HEADS = Number(flags.heads ?? (quick ? 4 : 10))
const HEAD_MS = Number(flags['head-ms'] ?? 500)
/** Four by default on this 2-core machine: 2,500 sockets each, and the processes still fit beside the server. */
const CLIENT_PROCESSES = (flags['client-processes'] ?? '4').split(',').map(Number)
const only = flags.only?.split(',')
const RESULTS = flags.results ?? 'ws-scenarios'
if (CLIENT_PROCESSES.some((k) => !Number.isInteger(k) || k < 1 || k > N))
  throw new Error(`--client-processes ${flags['client-processes']}: counts from 1 to --connections, comma-separated (1,4)`)
if (!/^[\w.-]+$/.test(RESULTS)) throw new Error(`--results ${RESULTS}: a file name without a folder`)
const runs = (scenario: string) => only === undefined || only.includes(scenario)
const now = (): number => performance.timeOrigin + performance.now()
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const load = (): number[] => loadavg().map((x) => Math.round(x * 100) / 100)

/**
 * The gateway and the stub each hold all N connections (and the memory scenario's clients are in
 * this process): every one is a file descriptor. Children inherit this process's limit, and an
 * unprivileged process cannot raise it past its hard limit: refuse before opening thousands.
 */
function checkOpenFiles(): void {
  const m = /Max open files\s+(\d+|unlimited)/.exec(readFileSync('/proc/self/limits', 'utf8'))
  const limit = m === null || m[1] === 'unlimited' ? Number.POSITIVE_INFINITY : Number(m[1])
  if (N + 1_000 > limit) throw new Error(`--connections ${N} needs more open files than this shell allows (${limit}): raise it first (ulimit -n ${N + 1_000})`)
}

/** Spawn a Node child (through tsx for a .ts script); resolve with it and the first stdout/stderr line `match` accepts. */
function start(
  args: string[],
  env: Record<string, string>,
  match: (line: string) => unknown,
  nodeArgs: string[] = [],
): Promise<{ child: ChildProcess; found: any }> {
  const child = spawn(process.execPath, [...nodeArgs, ...(args[0].endsWith('.ts') ? ['--import', 'tsx'] : []), ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  return new Promise((resolve, reject) => {
    let buffer = ''
    const onData = (d: Buffer) => {
      buffer += d.toString()
      for (const line of buffer.split('\n')) {
        let found: unknown
        try {
          found = match(line)
        } catch {
          found = undefined
        }
        if (found !== undefined) return resolve({ child, found })
      }
      buffer = buffer.slice(-4096)
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', onData)
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}: ${buffer}`)))
  })
}

function rssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return m ? Number(m[1]) * 1024 : NaN
}

function open(url: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url)
    ws.once('open', () => resolve(ws))
    ws.once('error', reject)
  })
}

/** Open `n` connections, `parallel` at a time (a listen backlog is not infinite). */
async function openMany(url: string, n: number, parallel = 200): Promise<WebSocket[]> {
  const all: WebSocket[] = []
  for (let i = 0; i < n; i += parallel) all.push(...(await Promise.all(Array.from({ length: Math.min(parallel, n - i) }, () => open(url)))))
  return all
}

async function closeAll(sockets: WebSocket[]): Promise<void> {
  await Promise.all(
    sockets.map(
      (ws) =>
        new Promise<void>((r) => {
          if (ws.readyState === WebSocket.CLOSED) return r()
          ws.once('close', () => r())
          ws.terminate()
        }),
    ),
  )
}

/** Answers per second with `connections` sockets keeping `window` eth_chainId calls in flight. */
async function messagesPerSecond(url: string, connections = 8, window = 64): Promise<number> {
  const sockets = await openMany(url, connections)
  let answered = 0
  let running = true
  const body = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}'
  for (const ws of sockets) {
    ws.on('message', () => {
      answered++
      if (running) ws.send(body)
    })
    for (let i = 0; i < window; i++) ws.send(body)
  }
  await sleep(500) // warm-up
  const from = answered
  const t0 = now()
  await sleep(SECONDS * 1000)
  const rate = ((answered - from) * 1000) / (now() - t0)
  running = false
  await closeAll(sockets)
  return rate
}

/** RSS growth per connection of process `pid` with `n` idle connections to `url`. */
async function memoryPerConnection(url: string, pid: number, n: number): Promise<number> {
  await sleep(1000)
  const before = rssBytes(pid)
  const sockets = await openMany(url, n)
  await sleep(2000)
  const after = rssBytes(pid)
  await closeAll(sockets)
  return (after - before) / n
}

async function main(): Promise<void> {
  checkOpenFiles()
  const children: ChildProcess[] = []
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-ws-bench-'))
  const profileDir = join(ROOT, 'bench', 'results', 'profile', 'ws')
  if (flags.profile) rmSync(profileDir, { recursive: true, force: true })
  const fanouts: Array<{ target: 'gateway' | 'stub'; loadAtStart: number[] } & FanOutResult> = []
  const results: Record<string, unknown> = {
    machine: await machine(),
    options: {
      connections: N,
      seconds: SECONDS,
      rounds: ROUNDS,
      heads: HEADS,
      headMs: HEAD_MS,
      clientProcesses: CLIENT_PROCESSES,
      only,
      profile: flags.profile,
    },
  }
  try {
    const stub = await start(['bench/ws-stub-node.ts', '--head-ms', String(HEAD_MS)], {}, (l) => JSON.parse(l).port)
    children.push(stub.child)
    const stubUrl = `ws://127.0.0.1:${stub.found}`
    const config = {
      listen: { host: '127.0.0.1', port: 0 },
      admin: { listen: { host: '127.0.0.1', port: 0 } },
      dataDir: join(dir, 'data'),
      networks: { 'eth-1': { chainId: 1, upstreams: [{ url: `http://127.0.0.1:${stub.found}`, ws: stubUrl, kind: 'full' }] } },
      // The limits are not what is measured: high enough that one key can hold every connection.
      ws: { maxConnectionsPerKey: 1_000_000, newConnectionsPerSecond: 1_000_000, messagesPerSecond: 100_000_000 },
    }
    const configPath = join(dir, 'config.json')
    writeFileSync(configPath, JSON.stringify(config))
    const env = { TOLLGATE_SECRET: randomBytes(32).toString('hex'), LOG_LEVEL: 'info' }
    // The command line compiled by tsc, as bin/tollgate.js runs it (through tsx, esbuild's
    // `__name` helper costs ~10% of a call: see compiledGateway).
    const main = join(await compiledGateway(), 'src', 'cli', 'main.js')
    const gw = await start(
      [main, 'start', '--config', configPath],
      env,
      (l) => {
        const line = JSON.parse(l)
        return line.msg === 'ready' ? line.ws : undefined
      },
      flags.profile ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : [],
    )
    children.push(gw.child)
    const account = await start(
      [main, 'accounts', 'create', '--config', configPath, '--wallet', `0x${randomBytes(20).toString('hex')}`, '--plan', 'private'],
      env,
      (l) => JSON.parse(l).apiKey,
    )
    const gwUrl = `${gw.found}/ws/eth-1?apikey=${account.found}`

    const direct: number[] = []
    const gateway: number[] = []
    for (let r = 0; r < (runs('messages') ? ROUNDS : 0); r++) {
      direct.push(await messagesPerSecond(stubUrl))
      gateway.push(await messagesPerSecond(gwUrl))
    }
    const median = (xs: number[]) => (xs.length === 0 ? NaN : [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)])
    results.messagesPerSecond = { stub: median(direct), gateway: median(gateway), ratio: median(gateway) / median(direct) }

    const memGw = runs('memory') ? await memoryPerConnection(gwUrl, gw.child.pid!, N) : NaN
    const memStub = runs('memory') ? await memoryPerConnection(stubUrl, stub.child.pid!, N) : NaN
    results.bytesPerIdleConnection = { stub: memStub, gateway: memGw, ratio: memGw / memStub }

    // For each count of client processes, the gateway then the stub (the stub's fan-out is the floor).
    for (const clientProcesses of runs('fanout') ? CLIENT_PROCESSES : []) {
      for (const [target, url, serverPid] of [
        ['gateway', gwUrl, gw.child.pid!],
        ['stub', stubUrl, stub.child.pid!],
      ] as const) {
        const loadAtStart = load()
        process.stderr.write(
          `[ws] fan-out: one head to ${N} subscribers of the ${target}, from ${clientProcesses} client process(es); load ${JSON.stringify(loadAtStart)}\n`,
        )
        fanouts.push({ target, loadAtStart, ...(await fanOut({ url, subscribers: N, clientProcesses, heads: HEADS, headMs: HEAD_MS, serverPid })) })
      }
    }
    results.headToSubscribers = fanouts

    const f = (x: number, d = 0) => x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d })
    console.log(`WebSocket scenarios (${N} connections, ${ROUNDS} rounds of ${SECONDS} s; baseline: the stub node served directly)`)
    console.log(`| scenario | stub | gateway | gateway / stub |`)
    console.log(`|---|---|---|---|`)
    if (runs('messages')) {
      console.log(
        `| messages/s (8 connections × 64 in flight, median) | ${f(median(direct))} | ${f(median(gateway))} | ${f(median(gateway) / median(direct), 2)} |`,
      )
    }
    if (runs('memory')) console.log(`| RSS per idle connection (bytes), ${N} connections | ${f(memStub)} | ${f(memGw)} | ${f(memGw / memStub, 2)} |`)
    for (const k of runs('fanout') ? CLIENT_PROCESSES : []) {
      const gwRun = fanouts.find((x) => x.target === 'gateway' && x.clientProcesses === k)!
      const stubRun = fanouts.find((x) => x.target === 'stub' && x.clientProcesses === k)!
      const row = (what: string, pick: (r: FanOutResult) => number, d = 1) =>
        console.log(
          `| one head to ${N} subscribers, ${k} client process(es): ${what} | ${f(pick(stubRun), d)} | ${f(pick(gwRun), d)} | ${f(pick(gwRun) / pick(stubRun), 2)} |`,
        )
      row('p50 ms', (r) => r.p50Ms)
      row('p99 ms', (r) => r.p99Ms)
      row('max ms', (r) => r.maxMs)
      row('to the last subscriber, median over heads, ms', (r) => r.lastSubscriberMedianMs)
      row('server CPU ms per head', (r) => r.serverCpuMsPerHead)
      row('client processes CPU ms per head', (r) => r.clientsCpuMsPerHead)
      console.log(`| deliveries timed, ${k} client process(es) (of ${N * HEADS}) | ${stubRun.delivered} | ${gwRun.delivered} | |`)
    }
  } finally {
    // The gateway stops on SIGTERM (and writes its profile): wait for it.
    await Promise.all(
      children.map(
        (c) =>
          new Promise<void>((r) => {
            if (c.exitCode !== null) return r()
            c.once('exit', () => r())
            c.kill('SIGTERM')
          }),
      ),
    )
    rmSync(dir, { recursive: true, force: true })
  }
  results.loadavgAtEnd = load()
  console.log(
    `load average ${JSON.stringify((results.machine as { loadavgAtStart: number[] }).loadavgAtStart)} at the start, ${JSON.stringify(results.loadavgAtEnd)} at the end`,
  )
  mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true })
  writeFileSync(join(ROOT, 'bench', 'results', `${RESULTS}.json`), JSON.stringify(results, null, 2) + '\n')
  if (flags.profile) {
    // The main thread's profile is the largest (the loader thread idles).
    const files = readdirSync(profileDir).filter((x) => x.endsWith('.cpuprofile'))
    const largest = files.map((x) => join(profileDir, x)).sort((a, b) => readFileSync(b).length - readFileSync(a).length)[0]
    // Only while heads were timed (the gateway's fan-outs), when there were any: not the start-up nor the 10,000 handshakes.
    const windows = fanouts.filter((x) => x.target === 'gateway').map((x): [number, number] => [x.timedFromUs, x.timedToUs])
    const text =
      (windows.length ? `while the heads were timed (${windows.length} fan-out(s))\n` : '') +
      formatProfile(summariseProfile(largest, 30, windows.length ? windows : undefined))
    const out = join(ROOT, 'bench', 'results', `profile-ws-${(only ?? ['all']).join('-')}.txt`)
    writeFileSync(out, text + '\n')
    console.log(`\ngateway profile (${largest}):\n${text}`)
  }
}

await main()
