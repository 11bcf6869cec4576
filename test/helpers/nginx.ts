import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '../../harness/free-port.js'
import { startFleetNginx } from '../../src/dev/nginx.js'

/** A real nginx (Debian's) in front of gateways, with the config of docs/fleet.md (src/dev/nginx-config.ts). */
export interface Nginx {
  url: string
  pid: number
  stop(): Promise<void>
}

export async function startNginx(instances: string[]): Promise<Nginx> {
  const dir = await mkdtemp(join(tmpdir(), 'tollgate-nginx-'))
  const port = await freePort()
  const nginx = await startFleetNginx(dir, `127.0.0.1:${port}`, instances)
  return {
    url: `http://127.0.0.1:${port}`,
    pid: nginx.pid,
    async stop() {
      await nginx.stop()
      await rm(dir, { recursive: true, force: true })
    },
  }
}
