import type { ChildProcess } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { jetstreamManager } from '@nats-io/jetstream'
import { connect } from '@nats-io/transport-node'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '../../harness/free-port.js'
import { findNatsServer, launch } from '../../harness/nats-server.js'
import { clusterArgs } from '../../src/dev/nats-cluster.js'

/** One node of a real nats-server cluster. */
export interface ClusterNode {
  readonly name: string
  readonly url: string
  readonly port: number
  /** Its process id while it runs (undefined while it is down). */
  readonly pid: number | undefined
  /** SIGKILL by its own pid, like a crash; its store is kept. */
  kill(): Promise<void>
  /** Start it again on the same ports and store. */
  restart(): Promise<void>
}

/** A replicated stream as the cluster reports it. */
export interface StreamState {
  lastSeq: number
  leader: string | undefined
  /** The nodes that hold the stream up to date: the leader and its current followers. */
  current: string[]
}

export interface NatsCluster {
  nodes: ClusterNode[]
  /** Every node's client URL: what the gateway's `events.nats` takes. */
  urls: string[]
  /** `stream` as the running nodes report it; undefined while it has no leader to answer (within 2 s). */
  streamState(stream: string): Promise<StreamState | undefined>
  stop(): Promise<void>
}

/**
 * `size` nats-servers with JetStream, each with its own store, routed to each other as one
 * cluster (Debian's nats-server, as an operator runs it). Resolves once every node is ready; the
 * JetStream meta leader is elected within a few seconds after (the gateway retries until then).
 * @example
 * const cluster = await startNatsCluster(3); t.teardown(() => cluster.stop())
 */
export async function startNatsCluster(size = 3): Promise<NatsCluster> {
  const binary = findNatsServer()
  const specs = await Promise.all(
    Array.from({ length: size }, async (_, i) => ({
      name: `n${i + 1}`,
      port: await freePort(),
      clusterPort: await freePort(),
      storeDir: await mkdtemp(join(tmpdir(), `tollgate-nats-${i + 1}-`)),
    })),
  )
  const argsOf = (spec: (typeof specs)[number]): string[] =>
    clusterArgs(
      spec.name,
      spec.clusterPort,
      specs.filter((s) => s !== spec).map((s) => s.clusterPort),
      'tollgate-test',
    )
  const children: (ChildProcess | undefined)[] = await Promise.all(specs.map((spec) => launch(binary, spec.port, spec.storeDir, argsOf(spec))))
  const terminate = async (i: number, signal: NodeJS.Signals): Promise<void> => {
    const child = children[i]
    children[i] = undefined
    if (!child || child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
    child.kill(signal)
    await exited
  }
  const nodes: ClusterNode[] = specs.map((spec, i) => ({
    name: spec.name,
    url: `nats://127.0.0.1:${spec.port}`,
    port: spec.port,
    get pid() {
      return children[i]?.pid
    },
    kill: () => terminate(i, 'SIGKILL'),
    async restart() {
      await terminate(i, 'SIGTERM')
      children[i] = await launch(binary, spec.port, spec.storeDir, argsOf(spec))
    },
  }))
  return {
    nodes,
    urls: nodes.map((n) => n.url),
    async streamState(stream) {
      const servers = nodes.filter((n) => n.pid !== undefined).map((n) => n.url)
      if (servers.length === 0) return undefined
      const nc = await connect({ servers, timeout: 2_000, maxReconnectAttempts: 0 }).catch(() => undefined)
      if (nc === undefined) return undefined
      try {
        const jsm = await jetstreamManager(nc, { timeout: 2_000, checkAPI: false })
        const { state, cluster } = await jsm.streams.info(stream)
        const followers = (cluster?.replicas ?? []).filter((r) => r.current).map((r) => r.name)
        return { lastSeq: state.last_seq, leader: cluster?.leader, current: cluster?.leader === undefined ? followers : [cluster.leader, ...followers] }
      } catch {
        return undefined
      } finally {
        await nc.close().catch(() => undefined)
      }
    },
    async stop() {
      await Promise.all(specs.map((_, i) => terminate(i, 'SIGTERM')))
      await Promise.all(specs.map((spec) => rm(spec.storeDir, { recursive: true, force: true })))
    },
  }
}
