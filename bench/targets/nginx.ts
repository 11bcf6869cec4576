import { existsSync } from 'node:fs'
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startListening, type Started } from '../lib/processes.js'

/**
 * nginx from Debian as the reverse proxy a team would put in front of its nodes instead of
 * Tollgate: a key check (a `map` of the allowed keys), a per-key `limit_req` set far above any
 * benchmark rate (so it does its bookkeeping and never refuses, like the gateway's bench plan),
 * keep-alive upstream connections, gzip for JSON, WebSocket upgrades. One worker, no master
 * (`master_process off`), unprivileged, in the foreground, its files in a temporary folder: the
 * same single core a Node process uses.
 */

export function findNginx(): string | undefined {
  return ['/usr/sbin/nginx', '/usr/local/sbin/nginx', '/usr/local/nginx/sbin/nginx'].find((p) => existsSync(p))
}

export function nginxConfig(dir: string, port: number, stubPort: number, keys: string[]): string {
  const keyLines = keys.map((k) => `    "${k}" 1;`).join('\n')
  return `worker_processes 1;
error_log ${dir}/error.log warn;
pid ${dir}/nginx.pid;
events { worker_connections 4096; }
http {
  access_log off;
  # nginx closes a client connection after 1,000 requests by default (keepalive_requests): wrk
  # reconnects, the open-loop generator counted the lost requests as errors. A keyed gateway in
  # front of RPC clients would raise it; so do the gateway and the Node proxy (no limit).
  keepalive_requests 10000000;
  keepalive_timeout 300s;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  client_max_body_size 1m;
  # The same gzip work as the gateway: JSON of 1 KiB or more, zlib's default level 6 (nginx's own default is 1).
  gzip on;
  gzip_types application/json;
  gzip_min_length 1024;
  gzip_proxied any;
  gzip_comp_level 6;
  map $arg_apikey $bench_key_ok {
    default 0;
${keyLines}
  }
  limit_req_zone $arg_apikey zone=perkey:10m rate=1000000r/s;
  upstream stub {
    server 127.0.0.1:${stubPort};
    keepalive 64;
    keepalive_requests 10000000;
  }
  map $http_upgrade $connection_upgrade {
    default upgrade;
    '' '';
  }
  server {
    listen 127.0.0.1:${port} backlog=4096;
    location /http/ {
      if ($bench_key_ok = 0) { return 401; }
      limit_req zone=perkey burst=1000000 nodelay;
      proxy_pass http://stub/;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      # A 1 MB answer fits in memory: no temporary files on the path.
      proxy_buffer_size 16k;
      proxy_buffers 32 64k;
      proxy_busy_buffers_size 128k;
    }
    location /ws/ {
      if ($bench_key_ok = 0) { return 401; }
      proxy_pass http://stub/;
      proxy_http_version 1.1;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection $connection_upgrade;
      proxy_read_timeout 300s;
    }
  }
}
`
}

export async function startNginx(binary: string, port: number, stubPort: number, keys: string[]): Promise<Started<{ port: number }>> {
  const dir = await mkdtemp(join(tmpdir(), 'tollgate-bench-nginx-'))
  for (const sub of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi', 'logs']) await mkdir(join(dir, sub))
  await writeFile(join(dir, 'nginx.conf'), nginxConfig(dir, port, stubPort, keys))
  // Its folder (config, temp files, logs) goes with it: runs no longer leave one in /tmp each.
  const removeDir = () => rm(dir, { recursive: true, force: true })
  const nginx = await startListening(
    'nginx',
    binary,
    ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log'), '-g', 'daemon off; master_process off;'],
    port,
  ).catch(async (err: unknown) => {
    await removeDir()
    throw err
  })
  return {
    ...nginx,
    async stop() {
      await nginx.stop()
      await removeDir()
    },
  }
}
