import { createServer } from 'node:net'

/**
 * A TCP port on 127.0.0.1 that was free a moment ago (the OS picks it). Another process may
 * take it before the caller binds it; on 2 shared cores that race is rare enough for tests.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address ? address.port : 0
      server.close(() => (port ? resolve(port) : reject(new Error('no port assigned'))))
    })
  })
}
