import { createServer, connect, type Server, type Socket } from 'node:net'
import { listenLocal } from './listen-local.js'

/**
 * A TCP proxy in front of a real node that can lose answers: in `cut` mode it forwards the
 * request to the node (which acts on it) and resets the client's connection when the answer
 * starts to come back, as a flapping link or a crashing load balancer does. In `pass` mode it is a
 * plain proxy. The node is real; only the link misbehaves.
 */
export interface FlakyProxy {
  url: string
  port: number
  mode: 'pass' | 'cut'
  /** Answers cut so far. */
  cuts: number
  close(): Promise<void>
}

export async function startFlakyProxy(target: { port: number }): Promise<FlakyProxy> {
  const upstreams = new Set<Socket>()
  const proxy: FlakyProxy = { url: '', port: 0, mode: 'pass', cuts: 0, close: async () => {} }
  const server: Server = createServer((client) => {
    const upstream = connect(target.port, '127.0.0.1')
    upstreams.add(upstream)
    upstream.on('close', () => upstreams.delete(upstream))
    client.on('data', (chunk) => upstream.write(chunk))
    upstream.on('data', (chunk) => {
      if (proxy.mode === 'cut') {
        proxy.cuts++
        client.resetAndDestroy()
        upstream.destroy()
        return
      }
      client.write(chunk)
    })
    client.on('error', () => upstream.destroy())
    upstream.on('error', () => client.destroy())
    client.on('end', () => upstream.end())
    upstream.on('end', () => client.end())
  })
  const listener = await listenLocal(server, 'the flaky proxy')
  proxy.port = listener.port
  proxy.url = `http://127.0.0.1:${listener.port}`
  proxy.close = async () => {
    // The node's side of each link is this proxy's own: the listener cuts only the clients'.
    for (const s of upstreams) s.destroy()
    await listener.close()
  }
  return proxy
}
