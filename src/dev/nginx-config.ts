/**
 * The nginx config of "Running a fleet" (docs/fleet.md): one upstream with every instance, kept-alive
 * connections to them, and a call that cannot reach one instance passed to the next. Not
 * `non_idempotent`: a call already sent to an instance is never sent to a second one (a draining
 * instance answers what it received), while a refused connection (an instance stopped) is passed
 * to the next. `max_fails=0`: no instance is marked down for a while, so that the one just
 * restarted is used at once while the next one stops. WebSocket upgrades pass through.
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
