import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '../../harness/free-port.js'
import { within } from './eventually.js'

/** The Prometheus binary (Debian's `prometheus` package), or undefined when it is not installed. */
export const PROMETHEUS = ['/usr/bin/prometheus', ...(process.env.PATH ?? '').split(':').map((d) => join(d, 'prometheus'))].find((p) => existsSync(p))

/** An alert as /api/v1/alerts lists it (pending or firing; a resolved alert is not listed). */
export interface PromAlert {
  labels: Record<string, string>
  annotations: Record<string, string>
  state: 'pending' | 'firing'
  activeAt: string
  value: string
}

export interface RunningPrometheus {
  url: string
  /** The alerts pending or firing now. */
  alerts(): Promise<PromAlert[]>
  /** An instant query: the series it returns (empty when none). */
  query(expr: string): Promise<Array<{ metric: Record<string, string>; value: [number, string] }>>
  /** SIGTERM to its own process, and wait for it to exit; its folder is removed. */
  stop(): Promise<void>
}

export interface StartPrometheusOptions {
  /** `host:port` of each admin listener to scrape (`/metrics`). */
  targets: string[]
  /** The alerting rules file's text (empty: none). */
  rules?: string
  /** Scrape and evaluation interval, in seconds (default 1). */
  intervalS?: number
}

/**
 * A real Prometheus on a free port of 127.0.0.1, with its own config and data folder, scraping the
 * targets and evaluating the rules every `intervalS`. Resolves once it is ready (`/-/ready`).
 * @example
 * const prom = await startPrometheus({ targets: [new URL(tg.gateway.admin).host], rules })
 * t.teardown(() => prom.stop())
 */
export async function startPrometheus(opts: StartPrometheusOptions): Promise<RunningPrometheus> {
  if (PROMETHEUS === undefined) throw new Error('prometheus is not installed (Debian: apt-get install prometheus)')
  const dir = await mkdtemp(join(tmpdir(), 'tollgate-prom-'))
  const interval = `${opts.intervalS ?? 1}s`
  await writeFile(join(dir, 'rules.yml'), opts.rules ?? 'groups: []\n')
  await writeFile(
    join(dir, 'prometheus.yml'),
    [
      'global:',
      `  scrape_interval: ${interval}`,
      `  scrape_timeout: ${interval}`,
      `  evaluation_interval: ${interval}`,
      'rule_files: [rules.yml]',
      'scrape_configs:',
      '  - job_name: tollgate',
      `    static_configs: [{ targets: ${JSON.stringify(opts.targets)} }]`,
      '',
    ].join('\n'),
  )
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const child: ChildProcess = spawn(
    PROMETHEUS,
    [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  )
  let stderr = ''
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (stderr = (stderr + s).slice(-4000)))
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      process.kill(child.pid!, 'SIGTERM')
      await exited
    }
    await rm(dir, { recursive: true, force: true })
  }
  const ready = await within(30_000, async () => {
    if (child.exitCode !== null) return true
    return (await fetch(`${url}/-/ready`).catch(() => undefined))?.status === 200
  })
  if (ready === undefined || child.exitCode !== null) {
    await stop()
    throw new Error(`prometheus did not get ready on ${url}: ${stderr}`)
  }
  const api = async (path: string): Promise<any> => {
    const body = (await (await fetch(`${url}${path}`)).json()) as { status: string; data: any; error?: string }
    if (body.status !== 'success') throw new Error(`prometheus ${path}: ${body.error}`)
    return body.data
  }
  return {
    url,
    alerts: async () => (await api('/api/v1/alerts')).alerts,
    query: async (expr) => (await api(`/api/v1/query?query=${encodeURIComponent(expr)}`)).result,
    stop,
  }
}
