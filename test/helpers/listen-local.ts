import type { Server, Socket } from 'node:net'
import type { TemplatedApp, us_listen_socket } from '../../src/front/uws.js'

/** A test server (node:http, or a bare node:net one) listening on 127.0.0.1: its port, and a close that cuts its open connections. */
export interface LocalListener {
  port: number
  /** Destroy every open connection (kept-alive ones included), then stop listening. */
  close(): Promise<void>
}

/**
 * Listen on a free port of 127.0.0.1 and keep track of the connections, so that close() does not
 * wait for the clients' kept-alive sockets (server.close() alone would).
 * @example
 * const { port, close } = await listenLocal(createServer(handler), 'the counting proxy')
 */
export async function listenLocal(server: Server, what: string): Promise<LocalListener> {
  const sockets = new Set<Socket>()
  server.on('connection', (s) => {
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error(`${what} did not bind a port`)
  return {
    port: address.port,
    async close() {
      for (const s of sockets) s.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

/**
 * Listen with a uWebSockets.js app (routes set by the caller) on a free port of 127.0.0.1; the
 * listen socket is closed at teardown. uWS is loaded here only when asked for, not by every test of
 * a node:http listener.
 * @example
 * const app = uws.App(); app.get('/x', handler); const port = await listenUws(t, app)
 */
export async function listenUws(t: { teardown(fn: () => unknown): void }, app: TemplatedApp): Promise<number> {
  const { uws } = await import('../../src/front/uws.js')
  let listenSocket: us_listen_socket | false = false
  const port = await new Promise<number>((resolve, reject) =>
    app.listen('127.0.0.1', 0, (s) => {
      if (!s) return reject(new Error('listen failed'))
      listenSocket = s
      resolve(uws.us_socket_local_port(s as never))
    }),
  )
  t.teardown(() => {
    if (listenSocket) uws.us_listen_socket_close(listenSocket)
  })
  return port
}
