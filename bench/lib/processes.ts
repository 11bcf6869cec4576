import { spawn, type ChildProcess } from 'node:child_process'
import { connect } from 'node:net'
import { readFileSync } from 'node:fs'

/** A process the harness started, with the JSON it printed when ready. */
export interface Started<T = Record<string, unknown>> {
  readonly name: string
  readonly pid: number
  readonly info: T
  stop(): Promise<void>
  /**
   * Ask a target that reads commands on stdin (bench/targets/control.ts) for figures of its own:
   * one line out, the next JSON line it prints back.
   */
  ask?(command: string): Promise<Record<string, number>>
}

/** Processes still running: killed when the harness exits, so that none outlives a failed run. */
const live = new Set<ChildProcess>()
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL')
})

/** `node --import tsx <script> <json>` (plus node flags), ready when it prints `{"ready":true,…}`. */
export function startNodeScript<T>(name: string, script: string, arg: unknown, nodeFlags: string[] = []): Promise<Started<T>> {
  return startReady<T>(name, process.execPath, nodeScriptArgs(script, arg, nodeFlags))
}

/** When a started process counts as ready, and how long to wait for it. */
export interface ReadyOptions {
  /** Whether this JSON line from its stdout says it serves (default: `ready: true`); sees every JSON line until then. */
  readyWhen?: (line: Record<string, unknown>) => boolean
  /** Default 120 s: at a load average near 20 on the 2 cores a gateway took more than 30 s to serve, and the run ended there. */
  timeoutMs?: number
  env?: NodeJS.ProcessEnv
}

/** Spawn and wait (at most 120 s by default) for a stdout line that parses as JSON with `ready: true` (or `readyWhen`). */
export function startReady<T>(name: string, command: string, args: string[], o: ReadyOptions = {}): Promise<Started<T>> {
  const readyWhen = o.readyWhen ?? ((line) => line.ready === true)
  const timeoutMs = o.timeoutMs ?? 120_000
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], ...(o.env ? { env: { ...process.env, ...o.env } } : {}) })
  live.add(child)
  child.once('exit', () => live.delete(child))
  let output = ''
  const answers: Array<(v: Record<string, number>) => void> = []
  const ask = (cmd: string): Promise<Record<string, number>> =>
    new Promise((res) => {
      answers.push(res)
      child.stdin!.write(cmd + '\n')
    })
  return new Promise((resolve, reject) => {
    const fail = (why: string): void => {
      clearTimeout(timer)
      child.kill('SIGKILL')
      reject(new Error(`${name}: ${why}\n${output.slice(0, 4000)}`))
    }
    const timer = setTimeout(() => fail(`not ready after ${timeoutMs / 1000} s`), timeoutMs)
    child.once('exit', (code, signal) => fail(`exited (${code ?? signal}) before it was ready`))
    child.stderr!.on('data', (c: Buffer) => {
      if (output.length < 20_000) output += c.toString()
    })
    let line = ''
    let ready = false
    child.stdout!.on('data', (c: Buffer) => {
      line += c.toString()
      let nl: number
      while ((nl = line.indexOf('\n')) >= 0) {
        const text = line.slice(0, nl)
        line = line.slice(nl + 1)
        let info: T | undefined
        try {
          info = JSON.parse(text) as T
        } catch {
          output += text + '\n'
          continue
        }
        if (!ready && typeof info === 'object' && info !== null && readyWhen(info as Record<string, unknown>)) {
          ready = true
          clearTimeout(timer)
          child.removeAllListeners('exit')
          resolve({ name, pid: child.pid!, info, stop: () => stopChild(child), ask })
        } else if (!ready) {
          // A log line before it serves (a gateway's pino lines): kept for the error message.
          if (output.length < 20_000) output += text + '\n'
        } else if (info !== undefined) {
          answers.shift()?.(info as unknown as Record<string, number>)
        }
      }
    })
  })
}

/** Spawn a process that prints nothing useful; ready when `port` accepts connections. */
export async function startListening(name: string, command: string, args: string[], port: number): Promise<Started<{ port: number }>> {
  const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] })
  live.add(child)
  child.once('exit', () => live.delete(child))
  let output = ''
  child.stderr!.on('data', (c: Buffer) => {
    if (output.length < 20_000) output += c.toString()
  })
  const deadline = Date.now() + 15_000
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${name}: exited (${child.exitCode})\n${output}`)
    if (await canConnect(port)) return { name, pid: child.pid!, info: { port }, stop: () => stopChild(child) }
    await new Promise((r) => setTimeout(r, 50))
  }
  child.kill('SIGKILL')
  throw new Error(`${name}: not listening on ${port} after 15 s\n${output}`)
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1', () => {
      s.destroy()
      resolve(true)
    })
    s.once('error', () => resolve(false))
  })
}

/** SIGTERM, then SIGKILL after 10 s (a gateway writing its CPU profile needs a moment). */
function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve()
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
    child.once('exit', () => {
      clearTimeout(timer)
      resolve()
    })
    child.kill('SIGTERM')
  })
}

/** Run a command to its end; its stdout. Rejects on a non-zero exit with stderr. */
export function runToEnd(command: string, args: string[], env?: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } })
    live.add(child)
    let out = ''
    let err = ''
    child.stdout!.on('data', (c: Buffer) => (out += c.toString()))
    child.stderr!.on('data', (c: Buffer) => (err += c.toString()))
    child.once('error', reject)
    child.once('exit', (code) => {
      live.delete(child)
      if (code === 0) resolve(out)
      else reject(new Error(`${command} exited ${code}: ${err.slice(0, 2000)}`))
    })
  })
}

/** CPU time (user + system) of a process so far, in ms, from /proc (Linux). */
export function cpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    // utime and stime are fields 14 and 15 of stat (11 and 12 after the command name), in clock ticks (100 Hz).
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100
  } catch {
    return Number.NaN
  }
}

/** Resident set size of a process now, in MiB. */
export function rssMiB(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return m ? Math.round(Number(m[1]) / 102.4) / 10 : Number.NaN
  } catch {
    return Number.NaN
  }
}

/** Samples the RSS of some processes every 100 ms until stopped; the peak of each. */
export function sampleRss(pids: number[]): { stop(): number[] } {
  const peaks = pids.map((p) => rssMiB(p))
  const timer = setInterval(() => {
    pids.forEach((p, i) => {
      const r = rssMiB(p)
      if (!(r <= peaks[i])) peaks[i] = r
    })
  }, 100)
  return {
    stop() {
      clearInterval(timer)
      return peaks
    },
  }
}

/** Run `node --import tsx <script> <json>` to its end and parse the last line it printed as JSON. */
export async function runNodeJson<T>(script: string, arg: unknown, nodeFlags: string[] = []): Promise<T> {
  return lastJsonLine<T>(await runToEnd(process.execPath, nodeScriptArgs(script, arg, nodeFlags)))
}

/** The arguments of `node` that run `script` with tsx and its JSON argument. */
export function nodeScriptArgs(script: string, arg: unknown, nodeFlags: string[] = []): string[] {
  return [...nodeFlags, '--import', 'tsx', script, JSON.stringify(arg)]
}

/** The last line of a process's output, parsed as JSON (the load generators print their result last). */
export function lastJsonLine<T>(out: string): T {
  const lines = out.trim().split('\n')
  return JSON.parse(lines[lines.length - 1]) as T
}

// Interrupted (Ctrl-C, kill): exit through the handler above, so that no target is left running.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130))
