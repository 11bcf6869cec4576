/**
 * WebSocket scenarios of the benchmark (issue 5), each compared in the same run with a named
 * baseline, the stub node served directly:
 *  1. messages per second: pipelined eth_chainId over a few connections (A B A B rounds);
 *  2. memory per idle connection with N connections open (RSS growth / N, gateway vs the stub,
 *     a bare uWS server);
 *  3. time for one head to reach N subscribers (p50, p99, max of arrival − the stub's send time).
 * The gateway runs as `tollgate start` in its own process, the stub in another, the clients here.
 * It stands alone (the bench harness of bench/run.ts is built on another branch) and writes
 * bench/results/ws-latest.json.
 *
 * Run: node --import tsx bench/ws-scenarios.ts [--quick] [--connections 10000] [--seconds 5] [--rounds 3] [--profile] [--only messages|memory|fanout]
 * (--profile: the gateway writes a CPU profile to bench/results/profiles/ when it stops.)
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { randomBytes } from 'node:crypto'
import WebSocket from 'ws'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(`--${name}`)
  return i < 0 ? fallback : Number(process.argv[i + 1])
}
const quick = process.argv.includes('--quick')
const N = arg('connections', quick ? 1000 : 10_000)
const SECONDS = arg('seconds', quick ? 2 : 5)
const ROUNDS = arg('rounds', quick ? 1 : 3)
const HEADS = quick ? 4 : 10
const onlyAt = process.argv.indexOf('--only')
const only = onlyAt < 0 ? undefined : process.argv[onlyAt + 1]
const runs = (scenario: string) => only === undefined || only === scenario
const now = (): number => performance.timeOrigin + performance.now()
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Spawn a Node child with tsx; resolve with it and the first stdout/stderr line `match` accepts. */
function start(
  args: string[],
  env: Record<string, string>,
  match: (line: string) => unknown,
  nodeArgs: string[] = [],
): Promise<{ child: ChildProcess; found: any }> {
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', ...args], {
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

/** Delivery time of `heads` heads to `n` newHeads subscribers of `url`, in ms. */
async function fanOut(url: string, n: number, heads: number): Promise<{ p50: number; p99: number; max: number; delivered: number }> {
  const sockets = await openMany(url, n)
  const latencies: number[] = []
  let subscribed = 0
  const done = new Promise<void>((resolve) => {
    for (const ws of sockets) {
      let seen = 0
      ws.on('message', (data) => {
        const text = data.toString()
        if (!text.includes('eth_subscription')) {
          subscribed++
          return
        }
        const sentAt = Number(/"sentAt":([0-9.]+)/.exec(text)?.[1])
        // The first head may have been sent before every client subscribed: it is not timed.
        if (subscribed === n && ++seen <= heads) latencies.push(now() - sentAt)
        if (latencies.length === n * heads) resolve()
      })
      ws.send('{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]}')
    }
  })
  await Promise.race([done, sleep(30_000 + heads * 2_000)])
  await closeAll(sockets)
  latencies.sort((a, b) => a - b)
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN
  return { p50: at(0.5), p99: at(0.99), max: latencies.at(-1) ?? NaN, delivered: latencies.length }
}

async function main(): Promise<void> {
  const children: ChildProcess[] = []
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-ws-bench-'))
  try {
    const stub = await start(['bench/ws-stub-node.ts', '--head-ms', '500'], {}, (l) => JSON.parse(l).port)
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
    const gw = await start(
      ['src/cli/main.ts', 'start', '--config', configPath],
      env,
      (l) => {
        const line = JSON.parse(l)
        return line.msg === 'ready' ? line.ws : undefined
      },
      process.argv.includes('--profile') ? ['--cpu-prof', '--cpu-prof-dir', join(ROOT, 'bench', 'results', 'profiles')] : [],
    )
    children.push(gw.child)
    const account = await start(
      ['src/cli/main.ts', 'accounts', 'create', '--config', configPath, '--wallet', `0x${randomBytes(20).toString('hex')}`, '--plan', 'private'],
      env,
      (l) => JSON.parse(l).apiKey,
    )
    const gwUrl = `${gw.found}/ws/eth-1?apikey=${account.found}`
    const results: Record<string, unknown> = { date: new Date().toISOString(), connections: N, seconds: SECONDS, rounds: ROUNDS }

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

    const none = { p50: NaN, p99: NaN, max: NaN, delivered: 0 }
    const fanGw = runs('fanout') ? await fanOut(gwUrl, N, HEADS) : none
    const fanStub = runs('fanout') ? await fanOut(stubUrl, N, HEADS) : none
    results.headToSubscribersMs = { stub: fanStub, gateway: fanGw, p99Ratio: fanGw.p99 / fanStub.p99 }

    const f = (x: number, d = 0) => x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d })
    console.log(`WebSocket scenarios (${N} connections, ${ROUNDS} rounds of ${SECONDS} s; baseline: the stub node served directly)`)
    console.log(`| scenario | stub | gateway | gateway / stub |`)
    console.log(`|---|---|---|---|`)
    console.log(
      `| messages/s (8 connections × 64 in flight, median) | ${f(median(direct))} | ${f(median(gateway))} | ${f(median(gateway) / median(direct), 2)} |`,
    )
    console.log(`| RSS per idle connection (bytes) | ${f(memStub)} | ${f(memGw)} | ${f(memGw / memStub, 2)} |`)
    console.log(`| one head to ${N} subscribers, p50 ms | ${f(fanStub.p50, 1)} | ${f(fanGw.p50, 1)} | ${f(fanGw.p50 / fanStub.p50, 2)} |`)
    console.log(`| one head to ${N} subscribers, p99 ms | ${f(fanStub.p99, 1)} | ${f(fanGw.p99, 1)} | ${f(fanGw.p99 / fanStub.p99, 2)} |`)
    console.log(`| deliveries timed (of ${N * HEADS}) | ${fanStub.delivered} | ${fanGw.delivered} | |`)
    mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true })
    writeFileSync(join(ROOT, 'bench', 'results', 'ws-latest.json'), JSON.stringify(results, null, 2) + '\n')
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
}

await main()
