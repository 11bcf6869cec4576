import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { freePort } from './free-port.js'

/** A real nats-server with JetStream, on a free port of 127.0.0.1, for tests. */
export interface NatsServer {
  url: string
  port: number
  /** JetStream store directory; survives stop/kill/restart, removed by stop() if we created it. */
  storeDir: string
  /** Graceful stop (SIGTERM); removes the store directory if startNats created it. */
  stop(): Promise<void>
  /** SIGKILL, like a crash; keeps the store so that restart() finds the streams again. */
  kill(): Promise<void>
  /** Start again on the same port and store (after kill(), or stopping a running one first). */
  restart(): Promise<void>
}

export interface StartNatsOptions {
  /** Reuse this store directory (kept on stop); default: a fresh temporary one. */
  storeDir?: string
}

/** Longest wait for "Server is ready": JetStream recovers its streams before it says so. */
const READY_TIMEOUT_MS = 15_000

/**
 * Start nats-server (`-js -a 127.0.0.1 -p <free port> -sd <dir>`) and resolve once it is ready
 * to accept clients with JetStream enabled.
 * @example
 * const nats = await startNats(); t.teardown(() => nats.stop())
 */
export async function startNats(opts: StartNatsOptions = {}): Promise<NatsServer> {
  const binary = findNatsServer()
  const ownStore = opts.storeDir === undefined
  const storeDir = opts.storeDir ?? (await mkdtemp(join(tmpdir(), 'tollgate-nats-')))
  const port = await freePort()
  let child: ChildProcess | undefined = await launch(binary, port, storeDir)

  const terminate = async (signal: NodeJS.Signals): Promise<void> => {
    const running = child
    child = undefined
    if (!running || running.exitCode !== null || running.signalCode !== null) return
    const exited = new Promise<void>((resolve) => running.once('exit', () => resolve()))
    running.kill(signal)
    await exited
  }

  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    storeDir,
    async stop() {
      await terminate('SIGTERM')
      if (ownStore) await rm(storeDir, { recursive: true, force: true })
    },
    kill: () => terminate('SIGKILL'),
    async restart() {
      await terminate('SIGTERM')
      child = await launch(binary, port, storeDir)
    },
  }
}

export function findNatsServer(): string {
  const candidates = (process.env.PATH ?? '').split(delimiter).map((dir) => join(dir, 'nats-server'))
  candidates.push('/usr/sbin/nats-server', '/usr/local/bin/nats-server')
  const found = candidates.find((path) => path !== 'nats-server' && existsSync(path))
  if (!found) throw new Error('nats-server not found on PATH nor in /usr/sbin (apt-get install nats-server)')
  return found
}

/** Servers still running: killed when the test process exits, so that none outlives a failed test. */
const live = new Set<ChildProcess>()
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL')
})

/**
 * Spawn and wait for the ready line on stderr; fail with the server's output if it exits first.
 * `extra`: more arguments (a cluster node's name, cluster port and routes).
 */
export function launch(binary: string, port: number, storeDir: string, extra: readonly string[] = []): Promise<ChildProcess> {
  const child = spawn(binary, ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', storeDir, ...extra], {
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  live.add(child)
  child.once('exit', () => live.delete(child))
  return new Promise((resolve, reject) => {
    let output = ''
    const timer = setTimeout(() => fail(new Error(`nats-server not ready after ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS)
    const fail = (err: Error): void => {
      clearTimeout(timer)
      child.kill('SIGKILL')
      reject(new Error(`${err.message}\n${output}`))
    }
    child.once('error', fail)
    child.once('exit', (code, signal) => fail(new Error(`nats-server exited (${code ?? signal})`)))
    child.stderr!.setEncoding('utf8')
    child.stderr!.on('data', (chunk: string) => {
      // Keep only the start: enough to explain a failure, bounded for a chatty server.
      if (output.length < 20_000) output += chunk
      if (output.includes('Server is ready')) {
        clearTimeout(timer)
        child.removeAllListeners('exit')
        child.removeAllListeners('error')
        // Keep draining stderr so that a full pipe never blocks the server.
        child.stderr!.removeAllListeners('data')
        child.stderr!.resume()
        resolve(child)
      }
    })
  })
}
