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

/** Whether a TCP port on 127.0.0.1 can be bound now. */
function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer()
    server.unref()
    server.once('error', () => resolve(false))
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)))
  })
}

/**
 * `count` consecutive TCP ports on 127.0.0.1 that were free a moment ago, the first of them
 * returned: for a gateway with workers, whose admin listeners take admin.listen.port + index. The
 * OS picks the first; the others are checked, and another first is picked until all are free.
 */
export async function freePortRange(count: number): Promise<number> {
  for (;;) {
    const first = await freePort()
    if (first + count - 1 > 65_535) continue
    let all = true
    for (let port = first + 1; port < first + count && all; port++) all = await isFree(port)
    if (all) return first
  }
}
