import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { freePort } from '../../harness/free-port.js'

/** A real Ganache node on 127.0.0.1 (a second EVM implementation beside anvil), for tests. */
export interface Ganache {
  url: string
  wsUrl: string
  port: number
  /** Ganache's chain id (1337 unless asked otherwise). */
  chainId: number
  /** A call straight to the node (not through the gateway); returns the whole response object. */
  rpc(method: string, params?: unknown[]): Promise<any>
  /** SIGTERM to its process (by its PID), then SIGKILL if it has not exited within 5 s. */
  stop(): Promise<void>
}

export interface StartGanacheOptions {
  chainId?: number
  /** Extra command-line arguments (`--miner.blockTime 1`…). */
  args?: string[]
}

/** Ganache's own CLI, run by this Node (Ganache 7.9.2 runs on Node 20; no install script needed). */
const CLI = fileURLToPath(new URL('../../node_modules/ganache/dist/node/cli.js', import.meta.url))
/** Longest wait for eth_chainId after spawning (Ganache itself needs 1-2 s to load here). */
const READY_TIMEOUT_MS = 30_000

/** Nodes still running: killed when the test process exits, so that none outlives a failed test. */
const live = new Set<ChildProcess>()
process.once('exit', () => {
  for (const child of live) {
    try {
      process.kill(child.pid!, 'SIGKILL')
    } catch {
      // already gone
    }
  }
})

/**
 * Start Ganache as its own process on a free port (deterministic accounts, quiet, instamine) and
 * resolve once eth_chainId answers; stop() kills that process by its PID.
 * @example
 * const ganache = await startGanache()
 * t.teardown(() => ganache.stop())
 * await ganache.rpc('eth_blockNumber') // { id: 1, jsonrpc: '2.0', result: '0x0' }
 */
export async function startGanache(opts: StartGanacheOptions = {}): Promise<Ganache> {
  const chainId = opts.chainId ?? 1337
  // A free port can be taken between freePort() and Ganache's bind: try a few.
  for (let attempt = 0; ; attempt++) {
    const port = await freePort()
    try {
      const child = await launch(port, chainId, opts.args ?? [])
      const url = `http://127.0.0.1:${port}`
      return { url, wsUrl: `ws://127.0.0.1:${port}`, port, chainId, rpc: (method, params = []) => rpc(url, method, params), stop: () => stop(child) }
    } catch (err) {
      if (attempt >= 2) throw err
    }
  }
}

async function launch(port: number, chainId: number, extra: string[]): Promise<ChildProcess> {
  const args = [
    CLI,
    '--server.host',
    '127.0.0.1',
    '--server.port',
    String(port),
    '--chain.chainId',
    String(chainId),
    '--wallet.deterministic',
    '--logging.quiet',
    ...extra,
  ]
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] })
  live.add(child)
  let stderr = ''
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (stderr = (stderr + s).slice(-2000)))
  let gone = false
  child.once('exit', () => {
    gone = true
    live.delete(child)
  })
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + READY_TIMEOUT_MS
  while (!gone) {
    try {
      const answer = await rpc(url, 'eth_chainId', [])
      if (typeof answer?.result === 'string') return child
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop(child)
      throw new Error(`Ganache on port ${port} did not answer eth_chainId within ${READY_TIMEOUT_MS} ms: ${stderr}`)
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`Ganache on port ${port} exited at start (code ${child.exitCode}): ${stderr}`)
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  process.kill(child.pid!, 'SIGTERM')
  const timer = setTimeout(() => {
    try {
      process.kill(child.pid!, 'SIGKILL')
    } catch {
      // gone meanwhile
    }
  }, 5_000)
  await exited
  clearTimeout(timer)
}

async function rpc(url: string, method: string, params: unknown[]): Promise<any> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  })
  return res.json()
}
