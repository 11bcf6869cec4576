import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createServer } from 'node:net'
import { fileURLToPath } from 'node:url'

/**
 * A local anvil node for `tollgate dev`: the real EVM node from npm `@foundry-rs/anvil`, so that a
 * first try on a fresh machine needs nothing else installed.
 */
export interface Devnet {
  readonly url: string
  readonly ws: string
  readonly chainId: number
  stop(): Promise<void>
}

const ANVIL_BIN = fileURLToPath(new URL('../../../node_modules/.bin/anvil', import.meta.url))
/** Same path whether this runs from src/ (tsx) or dist/src/ (compiled). */
function anvilBinary(): string {
  const candidates = [ANVIL_BIN, fileURLToPath(new URL('../../node_modules/.bin/anvil', import.meta.url))]
  const found = candidates.find((p) => existsSync(p))
  if (!found) throw new Error('anvil was not found in node_modules/.bin: run `npm ci` first (it installs @foundry-rs/anvil)')
  return found
}

export async function freeLocalPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.unref()
    srv.on('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port
      srv.close(() => resolve(port))
    })
  })
}

export async function startDevnet(opts: { chainId?: number; blockTime?: number } = {}): Promise<Devnet> {
  const chainId = opts.chainId ?? 31337
  const port = await freeLocalPort()
  const args = ['--host', '127.0.0.1', '--port', String(port), '--chain-id', String(chainId), '--silent']
  if (opts.blockTime) args.push('--block-time', String(opts.blockTime))
  const child: ChildProcess = spawn(anvilBinary(), args, { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()))
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 15_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`anvil exited at start (code ${child.exitCode}): ${stderr.slice(0, 500)}`)
    try {
      const r = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}',
      })
      if (r.ok) break
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL')
      throw new Error(`anvil did not answer on ${url} within 15 s: ${stderr.slice(0, 500)}`)
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  return {
    url,
    ws: `ws://127.0.0.1:${port}`,
    chainId,
    stop: () =>
      new Promise<void>((resolve) => {
        // Ctrl-C in a terminal signals the whole foreground process group, anvil included: it may
        // have died of SIGINT already (exitCode stays null, signalCode says so), and its 'exit'
        // would then be waited for in vain until the forced exit, without "stopped".
        if (child.exitCode !== null || child.signalCode !== null) return resolve()
        child.once('exit', () => resolve())
        child.kill('SIGTERM')
      }),
  }
}
