/**
 * A node for benchmarks only that answers each call as a real node answered it the first time: the
 * first of each call (method and params, the id aside) goes to `upstream` (a real anvil) and its
 * answer is kept; the same call again is answered from what was kept, at once. What the gateway
 * does with a node's answer (a proof checked, a balance passed on) is then measured without the
 * node's own time in it: anvil builds an eth_getProof in about 2 ms of CPU on the machine the
 * gateway runs on, which slows the gateway's share and would be counted against verification.
 * Nothing is mined while it runs (the kept answers would go stale otherwise).
 * @example
 * const node = await startRecordingNode(anvil.url) // node.url in the gateway's upstreams
 */
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'

interface Call {
  id?: unknown
  method?: string
  params?: unknown
}

export interface RecordingNode {
  url: string
  /** Calls answered from what was kept, and calls sent on to the real node. */
  counts: { kept: number; sentOn: number }
  close(): Promise<void>
}

export async function startRecordingNode(upstream: string): Promise<RecordingNode> {
  /** The answer's tail after the id (`,"result":…}`), by method and params. */
  const kept = new Map<string, string>()
  const counts = { kept: 0, sentOn: 0 }
  const keyOf = (c: Call): string => `${c.method}|${JSON.stringify(c.params ?? [])}`

  const answerOf = async (calls: Call[]): Promise<string[]> => {
    const missing = calls.filter((c) => !kept.has(keyOf(c)))
    if (missing.length > 0) {
      counts.sentOn += missing.length
      const res = await fetch(upstream, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(missing.map((c, i) => ({ jsonrpc: '2.0', id: i, method: c.method, params: c.params ?? [] }))),
      })
      const answers = (await res.json()) as Array<{ id: number; result?: unknown; error?: unknown }>
      for (const a of answers) {
        const tail = a.error !== undefined ? `,"error":${JSON.stringify(a.error)}}` : `,"result":${JSON.stringify(a.result)}}`
        kept.set(keyOf(missing[a.id]!), tail)
      }
    }
    counts.kept += calls.length - missing.length
    return calls.map((c) => `{"jsonrpc":"2.0","id":${JSON.stringify(c.id ?? null)}${kept.get(keyOf(c))}`)
  }

  const server = createServer(async (req: IncomingMessage, res) => {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Call | Call[]
    const answers = await answerOf(Array.isArray(body) ? body : [body])
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(Array.isArray(body) ? `[${answers.join(',')}]` : answers[0])
  })
  server.keepAliveTimeout = 60_000
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    counts,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
