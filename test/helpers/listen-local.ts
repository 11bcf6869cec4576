import type { Server } from 'node:http'
import type { Socket } from 'node:net'

/** A test server listening on 127.0.0.1: its port, and a close that cuts its open connections. */
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
