import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from './free-port.js'

/** A real nginx (Debian's) in front of gateways, as an operator runs one. */
export interface Nginx {
  url: string
  pid: number
  stop(): Promise<void>
}

/**
 * The load balancer of the README's "Running a fleet": an upstream with every instance, kept-alive
 * connections to them, and a call that cannot reach one instance passed to the next. Not
 * `non_idempotent`: a call already sent to an instance is never sent to a second one (a draining
 * instance answers what it received); a connection refused (an instance stopped) is retried on the
 * next. `max_fails=0`: an instance is never marked down for a while, so that the one just
 * restarted is used at once while the next one stops.
 */
export function loadBalancerConfig(dir: string, port: number, instances: string[]): string {
  return `worker_processes 1;
daemon off;
error_log ${dir}/error.log warn;
pid ${dir}/nginx.pid;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  upstream tollgate {
${instances.map((i) => `    server ${i} max_fails=0;`).join('\n')}
    keepalive 32;
  }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://tollgate;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_next_upstream error timeout http_502 http_503;
      proxy_next_upstream_tries 2;
      proxy_connect_timeout 1s;
    }
  }
}
`
}

export async function startNginx(instances: string[]): Promise<Nginx> {
  const binary = ['/usr/sbin/nginx', '/usr/local/sbin/nginx'].find((p) => existsSync(p))
  if (!binary) throw new Error('nginx not found (apt-get install nginx-light)')
  const dir = await mkdtemp(join(tmpdir(), 'tollgate-nginx-'))
  const port = await freePort()
  await writeFile(join(dir, 'nginx.conf'), loadBalancerConfig(dir, port, instances))
  const child: ChildProcess = spawn(binary, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log')], { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()))
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  // Ready when it accepts a connection on its port.
  const deadline = Date.now() + 10_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nginx exited: ${stderr}`)
    const up = await fetch(`http://127.0.0.1:${port}/healthz`).then(
      () => true,
      () => false,
    )
    if (up) break
    if (Date.now() > deadline) throw new Error(`nginx not listening after 10 s: ${stderr}`)
    await new Promise((r) => setTimeout(r, 50))
  }
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM')
      await exited
      await rm(dir, { recursive: true, force: true })
    },
  }
}
