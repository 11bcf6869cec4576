import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fleetNginxConfig } from './nginx-config.js'

export function findNginx(): string | undefined {
  return ['/usr/sbin/nginx', '/usr/local/sbin/nginx'].find((p) => existsSync(p))
}

export interface RunningNginx {
  pid: number
  stop(): Promise<void>
}

/**
 * Debian's nginx with the fleet config (nginx-config.ts) on `listen` (host:port) in front of
 * `instances`, its files in `dir`; resolves once it accepts connections.
 */
export async function startFleetNginx(dir: string, listen: string, instances: readonly string[]): Promise<RunningNginx> {
  const binary = findNginx()
  if (binary === undefined) throw new Error('nginx is not installed (apt-get install nginx-light)')
  mkdirSync(dir, { recursive: true })
  const conf = join(dir, 'nginx.conf')
  writeFileSync(conf, fleetNginxConfig({ dir, listen, instances }))
  const child: ChildProcess = spawn(binary, ['-p', dir, '-c', conf, '-e', join(dir, 'error.log')], { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()))
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
    await exited
  }
  // nginx logs nothing when it listens: a connection that is answered tells.
  const port = Number(listen.slice(listen.lastIndexOf(':') + 1))
  const deadline = Date.now() + 10_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nginx did not start: ${stderr.trim()}`)
    const up = await fetch(`http://127.0.0.1:${port}/healthz`).then(
      () => true,
      () => false,
    )
    if (up) break
    if (Date.now() > deadline) {
      await stop()
      throw new Error(`nginx does not listen on ${listen} after 10 s: ${stderr.trim()}`)
    }
    await new Promise((r) => setTimeout(r, 50))
  }
  return { pid: child.pid!, stop }
}
