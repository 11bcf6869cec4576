import { createServer, type Server } from 'node:http'
import { listenLocal, type LocalListener } from './listen-local.js'

/**
 * An HTTP JSON-RPC proxy in front of a real node that counts the calls reaching the node, by
 * method (a batch counts each of its calls). It forwards every request as it is and answers the
 * node's answer: only the counting is added, so a test can say what the gateway made the node do.
 */
export interface CountingProxy {
  url: string
  /** Calls forwarded so far, by JSON-RPC method. */
  readonly counts: ReadonlyMap<string, number>
  /** Calls of `method` forwarded so far (0 when none). */
  count(method: string): number
  /** HTTP requests received, each as the number of calls in it: 1 for a single call, n for a batch of n. */
  readonly requests: number[]
  /**
   * Answer a batch as a node that refuses batches does: one JSON-RPC error object, nothing
   * forwarded (single calls still are). Off at the start.
   */
  refuseBatches: boolean
  /**
   * Hold the requests holding a call that `match` accepts, unanswered and not forwarded, until
   * `release()`: a test then knows that each caller has come that far, and lets them all go on
   * at one moment (two gateway instances checking a payment, to make their commands race).
   */
  hold(match: (call: { method: string; params: unknown }) => boolean): HeldCalls
  close(): Promise<void>
}

export interface HeldCalls {
  /** Requests held so far. */
  readonly count: number
  /** Forward the held requests, all at once, and hold no more. */
  release(): void
}

export async function startCountingProxy(target: { url: string }): Promise<CountingProxy> {
  const counts = new Map<string, number>()
  const requests: number[] = []
  let listener: LocalListener | undefined
  let holding: { match: Parameters<CountingProxy['hold']>[0]; held: Array<() => void> } | undefined
  const proxy: CountingProxy = {
    url: '',
    counts,
    count: (method) => counts.get(method) ?? 0,
    requests,
    refuseBatches: false,
    hold(match) {
      const held: Array<() => void> = []
      holding = { match, held }
      return {
        get count() {
          return held.length
        },
        release() {
          if (holding?.held === held) holding = undefined
          for (const go of held.splice(0)) go()
        },
      }
    },
    async close() {
      await listener?.close()
    },
  }
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      let held = false
      try {
        const parsed = JSON.parse(body) as unknown
        requests.push(Array.isArray(parsed) ? parsed.length : 1)
        if (Array.isArray(parsed) && proxy.refuseBatches) {
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end('{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"batch requests are not supported"}}')
          return
        }
        for (const call of Array.isArray(parsed) ? parsed : [parsed]) {
          const method = (call as { method?: unknown } | null)?.method
          if (typeof method === 'string') counts.set(method, (counts.get(method) ?? 0) + 1)
          if (typeof method === 'string' && holding?.match({ method, params: (call as { params?: unknown }).params })) held = true
        }
      } catch {
        // Not JSON: the node answers it as it would; nothing to count.
      }
      const forward = (): void => {
        fetch(target.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then(
          async (answer) => {
            const text = await answer.text()
            res.writeHead(answer.status, { 'content-type': 'application/json' }).end(text)
          },
          () => res.writeHead(502).end(),
        )
      }
      if (held && holding !== undefined) holding.held.push(forward)
      else forward()
    })
  })
  listener = await listenLocal(server, 'the counting proxy')
  proxy.url = `http://127.0.0.1:${listener.port}`
  return proxy
}
