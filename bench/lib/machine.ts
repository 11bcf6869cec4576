import { cpus, loadavg } from 'node:os'
import { join } from 'node:path'
import { runToEnd } from './processes.js'

const ROOT = join(import.meta.dirname, '..', '..')

/** The machine and the code a run measured: kept with every result file. */
export async function machine(wrk?: string): Promise<Record<string, unknown>> {
  const git = async (args: string[]): Promise<string> => (await runToEnd('git', ['-C', ROOT, ...args]).catch(() => '')).trim()
  const version = async (cmd: string, args: string[]): Promise<string | null> =>
    (await runToEnd(cmd, args).catch((e: Error) => e.message)).split('\n')[0] || null
  return {
    date: new Date().toISOString(),
    nproc: cpus().length,
    cpu: cpus()[0]?.model ?? 'unknown',
    loadavgAtStart: loadavg().map((x) => Math.round(x * 100) / 100),
    node: process.version,
    commit: await git(['rev-parse', '--short', 'HEAD']),
    // Uncommitted code changes (results and docs do not count).
    dirty: (await git(['status', '--porcelain', '--', 'src', 'actors', 'bench', ':!bench/results', ':!bench/README.md'])) !== '',
    wrk: wrk ? await version('bash', ['-c', `${wrk} --version 2>&1 | head -1`]) : null,
    nginx: await version('bash', ['-c', 'nginx -v 2>&1']),
  }
}
