import { createServer, connect, type Server, type Socket } from 'node:net'

/**
 * A TCP link to a real server that a test can cut and restore, as a network partition does:
 * `cut()` resets every connection through it and refuses new ones; `restore()` lets them through
 * again on the same port. The server behind it keeps running for everyone else.
 */
export interface TcpLink {
  url: string
  port: number
  cut(): Promise<void>
  restore(): Promise<void>
  /** Stop carrying bytes without closing anything (packets dropped, no reset): the client still thinks it is connected. */
  stall(): void
  /** Carry bytes again (what was held is delivered). */
  unstall(): void
  close(): Promise<void>
}

export async function startTcpLink(target: { port: number }, scheme = 'nats'): Promise<TcpLink> {
  const sockets = new Set<Socket>()
  const pairs = new Set<[Socket, Socket]>()
  let stalled = false
  let server: Server | undefined
  let port = 0
  const listen = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const s = createServer((client) => {
        const upstream = connect(target.port, '127.0.0.1')
        for (const socket of [client, upstream]) {
          sockets.add(socket)
          socket.on('close', () => sockets.delete(socket))
          socket.on('error', () => socket.destroy())
        }
        const pair: [Socket, Socket] = [client, upstream]
        pairs.add(pair)
        if (!stalled) {
          client.pipe(upstream)
          upstream.pipe(client)
        }
        client.on('close', () => {
          pairs.delete(pair)
          upstream.destroy()
        })
        upstream.on('close', () => client.destroy())
      })
      s.once('error', reject)
      s.listen(port, '127.0.0.1', () => {
        port = (s.address() as { port: number }).port
        server = s
        resolve()
      })
    })
  const cut = async (): Promise<void> => {
    const s = server
    server = undefined
    for (const socket of sockets) socket.destroy()
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()))
  }
  const stall = (): void => {
    stalled = true
    for (const [a, b] of pairs) {
      a.unpipe(b)
      b.unpipe(a)
      a.pause()
      b.pause()
    }
  }
  const unstall = (): void => {
    stalled = false
    for (const [a, b] of pairs) {
      a.pipe(b)
      b.pipe(a)
    }
  }
  await listen()
  return { url: `${scheme}://127.0.0.1:${port}`, port, cut, restore: listen, close: cut, stall, unstall }
}
