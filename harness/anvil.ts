import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { readdir, readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { freePort } from './free-port.js'

/** A real anvil node on 127.0.0.1, for tests. */
export interface Anvil {
  url: string
  wsUrl: string
  port: number
  /** A call straight to the node (not through the gateway); returns the whole response object. */
  rpc(method: string, params?: unknown[]): Promise<any>
  /** Graceful stop (SIGTERM). */
  stop(): Promise<void>
  /** SIGKILL, like a crash. */
  kill(): Promise<void>
  /** Start again on the same port with a fresh chain (stopping a running one first). */
  restart(): Promise<void>
  /**
   * SIGSTOP: the node keeps its sockets but answers nothing (a hung node), until thaw().
   * Resolves once the kernel reports it stopped, so that no request sent afterwards is answered.
   */
  freeze(): Promise<void>
  /** SIGCONT after freeze(). */
  thaw(): void
}

export interface StartAnvilOptions {
  /** Extra command-line arguments. */
  args?: string[]
  chainId?: number
  /** Seconds between blocks; default: a block per transaction (automine). */
  blockTime?: number
  /** `--prune-history`: old state is gone, like a full node ("BlockOutOfRangeError"). */
  pruneHistory?: boolean
}

/**
 * The native anvil of this platform (@foundry-rs/anvil-<platform>-<arch>), started directly: the
 * package's bin (node_modules/.bin/anvil) is a node script that starts it, a node process more per
 * anvil (about 50 ms of CPU and 40 MB each, a few hundred times a test run). The script is kept
 * where the native package is not where npm puts it.
 */
const ANVIL = (() => {
  const arch = process.arch === 'x64' ? 'amd64' : process.arch
  const native = fileURLToPath(new URL(`../node_modules/@foundry-rs/anvil-${process.platform}-${arch}/bin/anvil`, import.meta.url))
  return existsSync(native) ? native : fileURLToPath(new URL('../node_modules/.bin/anvil', import.meta.url))
})()
/** Longest wait for eth_chainId to answer after spawning (anvil itself needs ~0.3 s). */
const READY_TIMEOUT_MS = 15_000
const POLL_MS = 50

/**
 * Start anvil (`--host 127.0.0.1 --port <free port> --silent`) and resolve once eth_chainId answers.
 * @example
 * const anvil = await startAnvil({ chainId: 1 }); t.teardown(() => anvil.stop())
 */
export async function startAnvil(opts: StartAnvilOptions = {}): Promise<Anvil> {
  const extra = [...(opts.args ?? [])]
  if (opts.chainId !== undefined) extra.push('--chain-id', String(opts.chainId))
  if (opts.blockTime !== undefined) extra.push('--block-time', String(opts.blockTime))
  if (opts.pruneHistory) extra.push('--prune-history')

  // A free port can be taken between freePort() and anvil's bind: try a few.
  let port = 0
  let child: ChildProcess | undefined
  for (let attempt = 0; child === undefined; attempt++) {
    port = await freePort()
    try {
      child = await launch(port, extra)
    } catch (err) {
      if (attempt >= 2) throw err
    }
  }

  const url = `http://127.0.0.1:${port}`
  const terminate = async (signal: NodeJS.Signals): Promise<void> => {
    const running = child
    child = undefined
    if (running) await signalGroup(running, signal)
  }

  return {
    url,
    wsUrl: `ws://127.0.0.1:${port}`,
    port,
    rpc: (method, params = []) => rpc(url, method, params),
    stop: () => terminate('SIGTERM'),
    kill: () => terminate('SIGKILL'),
    async restart() {
      await terminate('SIGTERM')
      child = await launch(port, extra)
    },
    async freeze() {
      if (!child) return
      process.kill(-child.pid!, 'SIGSTOP')
      await stopped(child.pid!)
    },
    thaw: () => child && process.kill(-child.pid!, 'SIGCONT'),
  }
}

/**
 * POST a request text to a node and return the answer text as sent (for byte comparisons).
 * @example await rawRpc(anvil.url, '{"jsonrpc":"2.0","id":"a","method":"eth_chainId","params":[]}')
 */
export async function rawRpc(url: string, body: string): Promise<string> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
  return res.text()
}

/** Direct JSON-RPC call; returns the whole response object. */
async function rpc(url: string, method: string, params: unknown[]): Promise<any> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  })
  return res.json()
}

/** Nodes still running: killed when the test process exits, so that none outlives a failed test. */
const live = new Set<ChildProcess>()
process.once('exit', () => {
  for (const child of live) {
    try {
      process.kill(-child.pid!, 'SIGKILL')
    } catch {
      // already gone
    }
  }
})

async function launch(port: number, extra: string[]): Promise<ChildProcess> {
  // `detached` puts anvil in a process group of its own, and every signal goes to the whole group:
  // where it is started through node_modules/.bin/anvil (a node wrapper that forwards only
  // SIGINT/SIGTERM), a SIGKILL to the wrapper alone would orphan the node.
  const child = spawn(ANVIL, ['--host', '127.0.0.1', '--port', String(port), '--silent', ...extra], {
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  live.add(child)
  let stderr = ''
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (stderr = (stderr + s).slice(-2000)))
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  child.once('exit', (code, signal) => {
    live.delete(child)
    if (process.env.DEBUG_ANVIL) console.error(`anvil ${port} exited`, code, signal, stderr)
  })
  let gone = false
  void exited.then(() => (gone = true))

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
      await signalGroup(child, 'SIGKILL')
      throw new Error(`anvil on port ${port} did not answer eth_chainId within ${READY_TIMEOUT_MS} ms: ${stderr}`)
    }
    await new Promise((r) => setTimeout(r, POLL_MS))
  }
  throw new Error(`anvil on port ${port} exited at start (code ${child.exitCode}): ${stderr}`)
}

/** Wait until every process of the group `pgid` is in state T (stopped), at most 5 s. */
async function stopped(pgid: number): Promise<void> {
  const deadline = Date.now() + 5_000
  for (;;) {
    const states: string[] = []
    for (const pid of await readdir('/proc')) {
      if (!/^\d+$/.test(pid)) continue
      try {
        // /proc/<pid>/stat: "pid (comm) state ppid pgrp ..."; comm may hold spaces, so split after ')'
        const stat = await readFile(`/proc/${pid}/stat`, 'utf8')
        const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
        if (Number(pgrp) === pgid) states.push(state)
      } catch {
        // the process went away meanwhile
      }
    }
    if (states.length > 0 && states.every((s) => s === 'T')) return
    if (Date.now() > deadline) throw new Error(`anvil group ${pgid} did not stop: ${states.join(',')}`)
    await new Promise((r) => setTimeout(r, 5))
  }
}

/** Send `signal` to the wrapper and the node (its process group) and wait for the wrapper to exit. */
async function signalGroup(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  try {
    process.kill(-child.pid!, signal)
    // A frozen node (freeze()) would hold SIGTERM until it runs again.
    if (signal !== 'SIGKILL') process.kill(-child.pid!, 'SIGCONT')
  } catch {
    return
  }
  await exited
}

/**
 * The receipt of a transaction just sent to anvil. Anvil answers eth_sendTransaction before the
 * receipt can be read, and on a loaded machine a read right after may find null: wait (bounded)
 * for the receipt itself rather than for time.
 */
export async function receiptOf(node: Pick<Anvil, 'rpc'>, hash: string, tries = 250): Promise<any> {
  for (let i = 0; i < tries; i++) {
    const receipt = (await node.rpc('eth_getTransactionReceipt', [hash])).result
    if (receipt) return receipt
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  throw new Error(`no receipt for ${hash} after ${tries} tries`)
}
