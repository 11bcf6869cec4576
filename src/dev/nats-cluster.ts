import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync } from 'node:fs'
import { delimiter, join } from 'node:path'
import { freeLocalPort } from './devnet.js'

/** Longest wait for "Server is ready": JetStream recovers its streams before it says so. */
const READY_TIMEOUT_MS = 15_000

/** nats-server on PATH or where Debian puts it; undefined when it is not installed. */
export function findNatsServer(): string | undefined {
  const candidates = (process.env.PATH ?? '').split(delimiter).map((dir) => join(dir, 'nats-server'))
  candidates.push('/usr/sbin/nats-server', '/usr/local/bin/nats-server')
  return candidates.find((path) => path !== 'nats-server' && existsSync(path))
}

/**
 * Spawn nats-server with JetStream on 127.0.0.1:`port`, its store in `storeDir`, and resolve once
 * it says it is ready; reject with its output if it exits first. `extra`: more arguments (a
 * cluster node's name, cluster port and routes).
 */
export function launchNatsServer(binary: string, port: number, storeDir: string, extra: readonly string[] = []): Promise<ChildProcess> {
  const child = spawn(binary, ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', storeDir, ...extra], { stdio: ['ignore', 'ignore', 'pipe'] })
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

/** The cluster arguments of node `name` routed to the other nodes' cluster ports. */
export function clusterArgs(name: string, clusterPort: number, otherClusterPorts: readonly number[], clusterName = 'tollgate'): string[] {
  return [
    '--server_name',
    name,
    '--cluster_name',
    clusterName,
    '--cluster',
    `nats://127.0.0.1:${clusterPort}`,
    '--routes',
    otherClusterPorts.map((p) => `nats://127.0.0.1:${p}`).join(','),
  ]
}

export interface LocalNatsCluster {
  urls: string[]
  stop(): Promise<void>
}

/** `size` nats-servers routed as one JetStream cluster, each with its store under `dir`. */
export async function startLocalNatsCluster(binary: string, dir: string, size = 3): Promise<LocalNatsCluster> {
  const nodes = await Promise.all(
    Array.from({ length: size }, async (_, i) => ({
      name: `n${i + 1}`,
      port: await freeLocalPort(),
      clusterPort: await freeLocalPort(),
      store: join(dir, `nats-${i + 1}`),
    })),
  )
  const children: ChildProcess[] = []
  const stop = async (): Promise<void> => {
    await Promise.all(
      children.map((child) => {
        if (child.exitCode !== null || child.signalCode !== null) return undefined
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
        child.kill('SIGTERM')
        return exited
      }),
    )
  }
  try {
    for (const node of nodes) {
      mkdirSync(node.store, { recursive: true })
      const others = nodes.filter((n) => n !== node).map((n) => n.clusterPort)
      children.push(await launchNatsServer(binary, node.port, node.store, clusterArgs(node.name, node.clusterPort, others)))
    }
  } catch (err) {
    await stop()
    throw err
  }
  return { urls: nodes.map((n) => `nats://127.0.0.1:${n.port}`), stop }
}
