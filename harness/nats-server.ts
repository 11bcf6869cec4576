import type { ChildProcess } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from './free-port.js'
import { findNatsServer as findInstalled, launchNatsServer } from '../src/dev/nats-cluster.js'

/** A real nats-server with JetStream, on a free port of 127.0.0.1, for tests. */
export interface NatsServer {
  url: string
  port: number
  /** JetStream store directory; survives stop/kill/restart, removed by stop() if we created it. */
  storeDir: string
  /** The monitoring endpoint (`http://127.0.0.1:<port>`), when started with `monitor: true`. */
  monitorUrl?: string
  /** The running server's process id (a benchmark reads its CPU time); undefined while it is stopped. */
  readonly pid: number | undefined
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
  /** Serve the monitoring endpoints (`-m`): `/jsz` counts the JetStream API calls the server took. */
  monitor?: boolean
}

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
  const monitorPort = opts.monitor ? await freePort() : undefined
  const extra = monitorPort === undefined ? [] : ['-m', String(monitorPort)]
  let child: ChildProcess | undefined = await launch(binary, port, storeDir, extra)

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
    ...(monitorPort === undefined ? {} : { monitorUrl: `http://127.0.0.1:${monitorPort}` }),
    get pid() {
      return child?.pid
    },
    async stop() {
      await terminate('SIGTERM')
      if (ownStore) await rm(storeDir, { recursive: true, force: true })
    },
    kill: () => terminate('SIGKILL'),
    async restart() {
      await terminate('SIGTERM')
      child = await launch(binary, port, storeDir, extra)
    },
  }
}

export function findNatsServer(): string {
  const found = findInstalled()
  if (!found) throw new Error('nats-server not found on PATH nor in /usr/sbin (apt-get install nats-server)')
  return found
}

/** Messages the server has delivered to its clients so far (`/connz`'s out_msgs, open connections); needs `monitor: true`. */
export async function messagesDelivered(nats: NatsServer): Promise<number> {
  if (nats.monitorUrl === undefined) throw new Error('start the server with { monitor: true } to count the messages it delivers')
  const connz = (await (await fetch(`${nats.monitorUrl}/connz`)).json()) as { connections?: Array<{ out_msgs: number }> }
  return (connz.connections ?? []).reduce((sum, c) => sum + c.out_msgs, 0)
}

/** JetStream API calls the server has taken so far (`/jsz`'s `api.total`); needs `monitor: true`. */
export async function jetStreamApiCalls(nats: NatsServer): Promise<number> {
  if (nats.monitorUrl === undefined) throw new Error('start the server with { monitor: true } to count its JetStream API calls')
  const jsz = (await (await fetch(`${nats.monitorUrl}/jsz`)).json()) as { api: { total: number } }
  return jsz.api.total
}

/** Servers still running: killed when the test process exits, so that none outlives a failed test. */
const live = new Set<ChildProcess>()
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL')
})

/** Spawn (src/dev/nats-cluster.ts) and remember it, so that none outlives a failed test. */
export async function launch(binary: string, port: number, storeDir: string, extra: readonly string[] = []): Promise<ChildProcess> {
  const child = await launchNatsServer(binary, port, storeDir, extra)
  live.add(child)
  child.once('exit', () => live.delete(child))
  return child
}
