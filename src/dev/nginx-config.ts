import { ERRORS, errorResponseJson } from '../errors/registry.js'

/**
 * The methods uWebSockets.js v20.30 parses. It closes a connection whose request line has any other
 * (`FOO`, `PROPFIND`, `PURGE`) without an answer, before the gateway sees it; nginx, which passes
 * any method on, then tried the next instance and answered 502 with its own HTML page. nginx
 * answers them itself instead (501, a JSON-RPC error), and the instances never see them.
 */
const UWS_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE', 'CONNECT'] as const

/** The nginx lines (inside `server`) that answer a method uWebSockets.js does not know. */
function unknownMethodLines(indent: string): string {
  const e = ERRORS.METHOD_NOT_IMPLEMENTED
  return [
    '# uWebSockets.js closes a connection whose method it does not know, unanswered: answer it here.',
    'default_type application/json;',
    `if ($request_method !~ ^(${UWS_METHODS.join('|')})$) {`,
    `  return ${e.http} '${errorResponseJson('null', e.rpc, e.message)}';`,
    '}',
  ]
    .map((line) => indent + line)
    .join('\n')
}

/**
 * The nginx config of "Running a fleet" (docs/fleet.md): one upstream with every instance, kept-alive
 * connections to them, and a call that cannot reach one instance passed to the next. Not
 * `non_idempotent`: a call already sent to an instance is never sent to a second one (a draining
 * instance answers what it received), while a refused connection (an instance stopped) is passed
 * to the next. `max_fails=0`: no instance is marked down for a while, so that the one just
 * restarted is used at once while the next one stops. WebSocket upgrades pass through.
 * A method uWebSockets.js does not know is answered by nginx (see UWS_METHODS).
 * `tollgate dev --fleet` and the rolling-restart test run exactly this.
 */
export function fleetNginxConfig(opts: { dir: string; listen: string; instances: readonly string[] }): string {
  const { dir } = opts
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
${opts.instances.map((i) => `    server ${i} max_fails=0;`).join('\n')}
    keepalive 32;
  }
  map $http_upgrade $connection_upgrade {
    default upgrade;
    '' '';
  }
  server {
    listen ${opts.listen};
${unknownMethodLines('    ')}
    location / {
      proxy_pass http://tollgate;
      proxy_http_version 1.1;
      proxy_set_header Connection $connection_upgrade;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_next_upstream error timeout http_502 http_503;
      proxy_next_upstream_tries 2;
      proxy_connect_timeout 1s;
      proxy_read_timeout 1h;
    }
  }
}
`
}
