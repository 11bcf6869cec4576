import { existsSync, readFileSync } from 'node:fs'
import { cpus } from 'node:os'
import { runToEnd } from './processes.js'

/**
 * Processes on chosen CPUs (taskset, Linux), and how busy each CPU was over a stretch of time:
 * the scenarios that give the target one core and the load another use both.
 */

export const TASKSET = '/usr/bin/taskset'

/** Why processes cannot be pinned on this machine, or undefined when they can (taskset and 2 CPUs or more). */
export function whyNoPinning(): string | undefined {
  if (cpus().length < 2) return 'one CPU'
  if (!existsSync(TASKSET)) return 'taskset not found: apt-get install -y util-linux'
  return undefined
}

/** Every thread of `pid` on `cpu` ("1", "0-1"); resolves with a function that puts its former CPUs back. */
export async function pin(pid: number, cpu: string): Promise<() => Promise<void>> {
  // "pid 123's current affinity list: 0,1"
  const before = (await runToEnd(TASKSET, ['-pc', String(pid)])).trim().split(': ').pop()!
  await runToEnd(TASKSET, ['-a', '-pc', cpu, String(pid)])
  // A process that has exited meanwhile has nothing to restore.
  return async () => void (await runToEnd(TASKSET, ['-a', '-pc', before, String(pid)]).catch(() => ''))
}

/** The command and arguments that run `command args` on `cpu` only (a child inherits it, with every thread it starts). */
export function onCpu(cpu: string | undefined, command: string, args: string[]): [string, string[]] {
  return cpu === undefined ? [command, args] : [TASKSET, ['-c', cpu, command, ...args]]
}

/** Busy and total time of each CPU so far, in clock ticks, from /proc/stat. */
export type CpuTimes = Array<{ busy: number; total: number }>

export function cpuTimes(): CpuTimes {
  const out: CpuTimes = []
  for (const line of readFileSync('/proc/stat', 'utf8').split('\n')) {
    const m = /^cpu(\d+) (.*)$/.exec(line)
    if (!m) continue
    // user nice system idle iowait irq softirq steal …: idle and iowait are the time it had nothing to run.
    const ticks = m[2].trim().split(/\s+/).map(Number)
    const total = ticks.slice(0, 8).reduce((a, b) => a + b, 0)
    out[Number(m[1])] = { busy: total - ticks[3] - ticks[4], total }
  }
  return out
}

/** Percent of the time `cpu` was busy between two readings (whatever ran on it: ours or anyone's). */
export function busyPercent(before: CpuTimes, after: CpuTimes, cpu: number): number {
  const a = before[cpu]
  const b = after[cpu]
  if (!a || !b || b.total === a.total) return Number.NaN
  return Math.round((1000 * (b.busy - a.busy)) / (b.total - a.total)) / 10
}
