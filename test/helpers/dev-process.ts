import { spawn } from 'node:child_process'
import { builtMain } from './built.js'

/** `tollgate dev` running as a child process: what it printed until "Stop:", and how to stop it. */
export interface DevProcess {
  /** Everything it printed on stdout up to and including its "Stop:" line. */
  readonly banner: string
  /** SIGINT (Ctrl-C), and the exit code. */
  stop(): Promise<number | null>
}

/** Longest wait for the banner: anvil starts, a token is deployed, the gateway loads (seconds on a loaded machine). */
const BANNER_MS = 90_000

/**
 * Start `tollgate dev --port 0 --data DIR` (built from the sources: see built.ts) and resolve once
 * it has printed its banner. SIGKILLed at teardown if it is still running.
 * @example
 * const dev = await startDev(t, dataDir); const key = /API key[^:]*: (tg_\w+)/.exec(dev.banner)?.[1]
 */
export async function startDev(t: { teardown(fn: () => unknown): void }, dataDir: string): Promise<DevProcess> {
  const child = spawn(process.execPath, [await builtMain(), 'dev', '--port', '0', '--data', dataDir], {
    env: { ...process.env, TOLLGATE_SECRET: '', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  })
  let out = ''
  let err = ''
  child.stderr.on('data', (d: Buffer) => (err += d.toString()))
  const banner = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`tollgate dev printed no banner within ${BANNER_MS} ms; stdout: ${out}; stderr: ${err}`)), BANNER_MS)
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString()
      if (/Stop:/.test(out)) {
        clearTimeout(timer)
        resolve(out)
      }
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`tollgate dev exited with ${code}: ${err}`))
    })
  })
  return {
    banner,
    stop: () =>
      new Promise((resolve) => {
        child.removeAllListeners('exit')
        if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode)
        child.once('exit', (code) => resolve(code))
        child.kill('SIGINT')
      }),
  }
}
