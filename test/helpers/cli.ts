import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { builtMain } from './built.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

export interface CliResult {
  code: number | null
  stdout: string
  stderr: string
  /** The last stdout line parsed as JSON (the answer of account and key commands). */
  last: any
}

/** Run `tollgate <args>` (built from the sources: see built.ts), as an operator would, in its own process. */
export async function runCli(args: string[], env: Record<string, string | undefined> = {}, timeoutMs = 30_000): Promise<CliResult> {
  const main = await builtMain()
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [main, ...args], {
      cwd: ROOT,
      env: { ...process.env, LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`tollgate ${args.join(' ')} did not finish in ${timeoutMs} ms; stderr: ${stderr}`))
    }, timeoutMs)
    child.on('error', reject)
    // 'close', not 'exit': the process may have exited before its last output reached us ('exit'
    // can come first, and a refusal's one line on stderr was read as empty in a CI run).
    child.on('close', (code) => {
      clearTimeout(timer)
      const lines = stdout.trim().split('\n')
      let last: any
      try {
        last = JSON.parse(lines[lines.length - 1] ?? '')
      } catch {
        last = undefined
      }
      resolve({ code, stdout, stderr, last })
    })
  })
}

export { within } from './eventually.js'

/**
 * A command (or any start) begun now, at the top of a file, whose result a test below checks: its
 * failure is that test's when it awaits it, not an unhandled rejection that ends the file first.
 * @example
 * const refused = begun(runCli(['replay', '--config', path], env)) // then, in a test: (await refused).code
 */
export function begun<T>(run: Promise<T>): Promise<T> {
  run.catch(() => undefined)
  return run
}
