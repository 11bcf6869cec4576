import { existsSync, rmSync } from 'node:fs'
import { mkdtemp, symlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { findNginx, startNginx } from '../targets/nginx.js'
import { freePort } from '../../harness/free-port.js'
import { runToEnd, startNodeScript, type Started } from './processes.js'
import type { GatewayTargetOptions } from '../targets/gateway-entry.js'

/** One thing a scenario can send load to. */
export interface Target {
  /** Stable id, used in results/latest.json and in ratios. */
  id: string
  /** What it is, for the table. */
  label: string
  pid: number
  /**
   * Every process that serves for it, when it is more than `pid` (the workers of `tollgate start`):
   * its CPU time and peak RSS are summed over them.
   */
  pids?: number[]
  /** POST URL for JSON-RPC (the key in `?apikey=` where one is needed). */
  http: string
  /** WebSocket URL, when the target has one. */
  ws?: string
  /** Figures from inside a Node target (event-loop delay): see bench/targets/control.ts. */
  ask?: (command: string) => Promise<Record<string, number>>
}

export interface TargetSet {
  targets: Map<string, Target>
  stubPid: number
  /** Why a target is missing from this run (nginx not installed, …). */
  notes: string[]
  stopAll(): Promise<void>
}

const ROOT = join(import.meta.dirname, '..', '..')
const BENCH = join(ROOT, 'bench')

/**
 * The gateway compiled by tsc, as `tollgate start` runs it (bin/tollgate.js loads dist/): a
 * temporary folder with package.json (for `"type": "module"`), schemas/ (the shipped catalogs),
 * our node_modules, and `dist/` from `tsc -p tsconfig.build.json`; returns that `dist/` folder.
 * Until session 8 the benchmark ran the sources through tsx, whose esbuild transform wraps every
 * function made at run time in a `__name` call (keepNames): 10% of a distinct call's CPU that a
 * user's gateway never spends. Compiled once per run and tree (the targets and the workers
 * scenario share it); the folders are removed when the run exits.
 */
export function compiledGateway(ref?: string): Promise<string> {
  const key = ref ?? ''
  let compiled = compiledTrees.get(key)
  if (compiled === undefined) compiledTrees.set(key, (compiled = compile(ref)))
  return compiled
}

const compiledTrees = new Map<string, Promise<string>>()
const compiledDirs: string[] = []
process.once('exit', () => {
  // rmSync unlinks the node_modules symlink; it does not follow it.
  for (const dir of compiledDirs) rmSync(dir, { recursive: true, force: true })
})

async function compile(ref: string | undefined): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), ref ? 'tollgate-bench-baseline-' : 'tollgate-bench-gateway-'))
  compiledDirs.push(dir)
  const files = 'src actors schemas package.json tsconfig.json tsconfig.build.json'
  const from = ref
    ? `git -C '${ROOT}' archive '${ref.replace(/'/g, '')}' ${files}`
    : `git -C '${ROOT}' ls-files -z -co --exclude-standard ${files} | tar -C '${ROOT}' --null -T - -c`
  await runToEnd('bash', ['-o', 'pipefail', '-c', `${from} | tar -x -C '${dir}'`])
  await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'))
  const out = join(dir, 'dist')
  // tsc emits even when it finds a type error (an older commit may not type-check with today's
  // node_modules); the entry needs only the JavaScript, so an exit code of 2 with output is fine.
  await runToEnd(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(dir, 'tsconfig.build.json'), '--outDir', out]).catch(
    (err: Error) => {
      if (!existsSync(join(out, 'src', 'main', 'start-gateway.js'))) throw err
    },
  )
  return out
}

/** One gateway as a target, in its own process (bench/targets/gateway-entry.ts): its key is in its URLs. */
export async function startGatewayTarget(
  id: string,
  label: string,
  arg: GatewayTargetOptions,
  flags?: string[],
): Promise<{ process: Started<{ port: number; apiKey: string }>; target: Target }> {
  const p = await startNodeScript<{ port: number; apiKey: string }>(id, join(BENCH, 'targets', 'gateway-entry.ts'), arg, flags)
  const base = `127.0.0.1:${p.info.port}`
  const target: Target = {
    id,
    label,
    pid: p.pid,
    http: `http://${base}/http/eth-1?apikey=${p.info.apiKey}`,
    ws: `ws://${base}/ws/eth-1?apikey=${p.info.apiKey}`,
    ask: p.ask,
  }
  return { process: p, target }
}

/**
 * Start the stub and every target, each in its own process: nginx (when installed), the plain
 * Node proxy, and gateways (everything on; metering off; HTTP-only upstream; a baseline commit).
 */
export async function startTargets(opts: {
  baseline?: string
  gatewayNodeFlags?: string[]
  /** `gateway-and-nginx`: the stub, the gateway and nginx (the slowloris scenario alone). */
  which?: 'all' | 'quick' | 'gateway-only' | 'gateway-and-nginx' | 'stub-only'
}): Promise<TargetSet> {
  const started: Started[] = []
  const notes: string[] = []
  const targets = new Map<string, Target>()
  const stopAll = async (): Promise<void> => {
    await Promise.all(started.map((s) => s.stop()))
  }
  try {
    const stub = await startNodeScript<{ port: number }>('stub', join(BENCH, 'stub', 'stub-upstream.ts'), 0)
    started.push(stub)
    const stubHttp = `http://127.0.0.1:${stub.info.port}/`
    const stubWs = `ws://127.0.0.1:${stub.info.port}/`
    targets.set('stub', { id: 'stub', label: 'stub directly (no proxy)', pid: stub.pid, http: stubHttp, ws: stubWs })
    // The workers scenario alone starts its own gateways (`tollgate start`): the others would idle beside it.
    if (opts.which === 'stub-only') return { targets, stubPid: stub.pid, notes, stopAll }
    const catalog = join(BENCH, 'targets', 'bench-plans.json')

    const srcRoot = await compiledGateway()
    const gateways: Array<{ id: string; label: string; arg: GatewayTargetOptions; flags?: string[] }> = [
      {
        id: 'gateway',
        label: 'Tollgate (auth, AccountActor, metering; WS upstream)',
        arg: { stubHttp, stubWs, catalog, srcRoot },
        flags: opts.gatewayNodeFlags,
      },
    ]
    if (opts.which !== 'gateway-only' && opts.which !== 'gateway-and-nginx') {
      gateways.push({ id: 'gateway-no-metering', label: 'Tollgate, usage metering off', arg: { stubHttp, stubWs, catalog, srcRoot, meterUsage: false } })
      if (opts.which !== 'quick')
        gateways.push({ id: 'gateway-http-upstream', label: 'Tollgate, node reached over HTTP only', arg: { stubHttp, catalog, srcRoot } })
      if (opts.baseline) {
        const baseRoot = await compiledGateway(opts.baseline)
        gateways.push(
          { id: `gateway@${opts.baseline}`, label: `Tollgate at ${opts.baseline} (WS upstream)`, arg: { stubHttp, stubWs, catalog, srcRoot: baseRoot } },
          { id: `gateway-http-upstream@${opts.baseline}`, label: `Tollgate at ${opts.baseline}, HTTP upstream`, arg: { stubHttp, catalog, srcRoot: baseRoot } },
        )
      }
    }
    // One at a time: each opens LMDB and catches up; in parallel they would fight for 2 cores.
    const keys: string[] = []
    for (const g of gateways) {
      const { process: p, target } = await startGatewayTarget(g.id, g.label, g.arg, g.flags)
      started.push(p)
      keys.push(p.info.apiKey)
      targets.set(g.id, target)
    }
    if (opts.which === 'gateway-only') return { targets, stubPid: stub.pid, notes, stopAll }

    // The rivals accept one key; any gateway's will do (they are all random and valid).
    const key = keys[0]
    if (opts.which !== 'gateway-and-nginx') {
      const proxy = await startNodeScript<{ port: number }>('node-proxy', join(BENCH, 'targets', 'node-proxy.ts'), { upstream: stubHttp, keys: [key] })
      started.push(proxy)
      const http = `http://127.0.0.1:${proxy.info.port}/http/eth-1?apikey=${key}`
      targets.set('node-proxy', { id: 'node-proxy', label: 'plain Node proxy (node:http + undici Pool)', pid: proxy.pid, http, ask: proxy.ask })
    }

    const nginx = findNginx()
    if (nginx) {
      const port = await freePort()
      const n = await startNginx(nginx, port, stub.info.port, [key])
      started.push(n)
      targets.set('nginx', {
        id: 'nginx',
        label: 'nginx 1 worker (key map, limit_req, keep-alive)',
        pid: n.pid,
        http: `http://127.0.0.1:${port}/http/eth-1?apikey=${key}`,
        ws: `ws://127.0.0.1:${port}/ws/eth-1?apikey=${key}`,
      })
    } else {
      notes.push('nginx: not installed, skipped (apt-get install -y nginx-light, or run bench/setup.sh)')
    }
    return { targets, stubPid: stub.pid, notes, stopAll }
  } catch (err) {
    await stopAll()
    throw err
  }
}
