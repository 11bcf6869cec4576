import { createServer } from 'node:net'
import { PortUnavailableError } from './errors.js'

/**
 * Whether `host:port` can be bound by this process alone: a plain node:net bind, without
 * SO_REUSEPORT, let go at once. It fails while any process listens there, a group of processes
 * sharing the port with SO_REUSEPORT included (uWS's default), which is what a second gateway must
 * not join. Resolves with the bind's error code (`EADDRINUSE`, `EADDRNOTAVAIL`, `EACCES`), or
 * undefined when the port is free now (it may be taken the next moment: see PortUnavailableError's users).
 */
export function probePort(host: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const server = createServer()
    server.unref()
    server.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message))
    server.listen({ host, port }, () => server.close(() => resolve(undefined)))
  })
}

/**
 * The error for a listener that could not bind `host:port` (`field` is the config field that names
 * it), worded by why: what happened and what to do.
 * @example
 * const code = await probePort('127.0.0.1', 8080)
 * if (code) throw portUnavailable('127.0.0.1', 8080, 'listen', code)
 */
export function portUnavailable(host: string, port: number, field: string, code: string | undefined): PortUnavailableError {
  const where = `${host}:${port} ("${field}" in the config)`
  switch (code) {
    case 'EADDRINUSE':
      return new PortUnavailableError(
        `cannot listen on ${where}: another process serves that port. A second gateway there would silently take part of its connections, so this one does not start. ` +
          `Stop the other process (\`ss -ltnp 'sport = :${port}'\` shows it), or set "${field}.port" to a free port; to run several gateway processes on one port, use "workers" in the config`,
      )
    case 'EADDRNOTAVAIL':
      return new PortUnavailableError(
        `cannot listen on ${where}: ${host} is not an address of this machine; set "${field}.host" to one of its addresses (or 0.0.0.0)`,
      )
    case 'EACCES':
      return new PortUnavailableError(
        `cannot listen on ${where}: ports below 1024 need privileges; use a port of 1024 or more behind a proxy, or grant CAP_NET_BIND_SERVICE`,
      )
    default:
      return new PortUnavailableError(
        `cannot listen on ${where}${code ? ` (${code})` : ''}: the port is taken or the address is not local; change "${field}" in the config`,
      )
  }
}
