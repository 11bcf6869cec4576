import { createServer } from 'node:http'
import { listenLocal } from './listen-local.js'

/**
 * What the proxy does to the calls a rule matches. Rules are looked at in this order: `refuse`,
 * `answerError`, `answerNull`, then the call goes to the node after `delayMs`, and its result goes through `alter`.
 */
export interface FaultRule {
  /** Wait this long before sending the call to the node (inside a worker slot, see `workers`). */
  delayMs?: number
  /** Answer -32601 "the method <m> does not exist/is not available" as geth does; the node never sees the call. */
  refuse?: boolean
  /**
   * Answer this JSON-RPC error as a node of another client would (geth's "missing trie node" of a
   * pruned full node); the node never sees the call.
   */
  answerError?: { code: number; message: string; data?: unknown }
  /** Answer `"result":null` (no such block, transaction or receipt); the node never sees the call. */
  answerNull?: boolean
  /** Change the node's result (an error answer is passed on as it is). */
  alter?: (result: unknown, call: { method: string; params: unknown }) => unknown
  /**
   * Apply the rule only to the calls this says yes to (a node that refuses one form of a method's
   * params, as Ganache refuses a `{blockHash}` block); the others get the next rule that matches
   * (`eth_*`, then `*`), or go to the node untouched.
   */
  onlyWhen?: (call: { method: string; params: unknown }) => boolean
}

/** A fault-injecting JSON-RPC proxy in front of a real node (see startFaultProxy). */
export interface FaultProxy {
  /** HTTP URL to give the gateway in place of the node's. */
  readonly url: string
  /**
   * Set the rule of a method (`eth_getBalance`), a namespace (`debug_*`) or every call (`*`),
   * replacing the one it had; the most precise match applies. Takes effect for the next call.
   */
  set(match: string, rule: FaultRule): void
  /** Forget the rule of `match`, or every rule. */
  clear(match?: string): void
  /**
   * At most this many calls handled at once (each call of a batch counts); the rest wait in
   * arrival order, as on a node with that many workers. Undefined (the default): no limit.
   */
  workers: number | undefined
  /** Calls received so far, of one method, or of every method when none is given. */
  received(method?: string): number
  /** Calls the node itself was sent (not refused, not answered null), of one method or all. */
  forwarded(method?: string): number
  /** The request bodies received so far, as the bytes that came (decoded as UTF-8), in arrival order: what the node was sent. */
  readonly bodies: readonly string[]
  /** Calls waiting for a worker now. */
  readonly queued: number
  /** Calls that found every worker busy and waited in the queue, of one method or all. */
  waited(method?: string): number
  close(): Promise<void>
}

/**
 * Start an HTTP JSON-RPC proxy in front of a real node (anvil) that can, per method or
 * namespace: delay, alter a result, refuse (-32601), answer null, and queue the calls like a node
 * with N workers. A batch is taken apart: each call gets its own rule and goes to the node on its
 * own, and the answers come back in one array in the request's order. Rules change while it runs.
 * The node stays real; only what stands in front of it misbehaves.
 * @example
 * const anvil = await startAnvil()
 * const proxy = await startFaultProxy(anvil)
 * t.teardown(() => proxy.close())
 * proxy.set('eth_getBalance', { alter: (r) => `0x${(BigInt(r as string) + 1n).toString(16)}` }) // a node that lies
 * proxy.set('debug_*', { refuse: true }) // a node without debug_
 * proxy.set('*', { delayMs: 300 }) // a slow node
 * proxy.workers = 2 // two calls at a time, the rest wait
 * // give the gateway { url: proxy.url, kind: 'full' } as one of its upstreams
 */
export async function startFaultProxy(target: { url: string }): Promise<FaultProxy> {
  const rules = new Map<string, FaultRule>()
  const received = new Map<string, number>()
  const forwarded = new Map<string, number>()
  const waited = new Map<string, number>()
  const waiting: Array<() => void> = []
  const bodies: string[] = []
  let busy = 0

  /** The most precise rule of the call whose onlyWhen (if any) takes it. */
  const ruleOf = (method: string, params: unknown): FaultRule | undefined => {
    const sep = method.indexOf('_')
    for (const match of [method, sep > 0 ? `${method.slice(0, sep)}_*` : undefined, '*']) {
      const rule = match === undefined ? undefined : rules.get(match)
      if (rule !== undefined && (rule.onlyWhen === undefined || rule.onlyWhen({ method, params }))) return rule
    }
    return undefined
  }
  const count = (map: Map<string, number>, method: string): void => {
    map.set(method, (map.get(method) ?? 0) + 1)
  }
  const total = (map: Map<string, number>, method?: string): number =>
    method === undefined ? [...map.values()].reduce((a, b) => a + b, 0) : (map.get(method) ?? 0)

  /** A worker slot: resolves when fewer than `workers` calls are being handled (arrival order). */
  const acquire = (method: string): Promise<void> => {
    if (proxy.workers === undefined || busy < proxy.workers) {
      busy++
      return Promise.resolve()
    }
    count(waited, method)
    // The slot is handed over by release(): `busy` already counts it.
    return new Promise<void>((resolve) => waiting.push(resolve))
  }
  const release = (): void => {
    busy--
    // `workers` may have been raised meanwhile: wake as many as fit.
    while (waiting.length > 0 && (proxy.workers === undefined || busy < proxy.workers)) {
      busy++
      waiting.shift()!()
    }
  }

  // Delays still running when the proxy closes are dropped: a call held for minutes must not keep the test alive.
  const delays = new Set<NodeJS.Timeout>()
  const delay = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const timer = setTimeout(() => {
        delays.delete(timer)
        resolve()
      }, ms)
      delays.add(timer)
    })

  const post = async (body: string): Promise<{ status: number; text: string }> => {
    const res = await fetch(target.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
    return { status: res.status, text: await res.text() }
  }

  /** One call: its answer text, or undefined for a notification (no id: nothing to answer). */
  const handle = async (call: unknown): Promise<string | undefined> => {
    const c = (call ?? {}) as { id?: unknown; method?: unknown; params?: unknown }
    const method = typeof c.method === 'string' ? c.method : ''
    const idJson = JSON.stringify(c.id ?? null)
    const notification = typeof call === 'object' && call !== null && !('id' in call)
    count(received, method)
    const rule = ruleOf(method, c.params)
    await acquire(method)
    try {
      let answer: string
      if (rule?.refuse) {
        answer = `{"jsonrpc":"2.0","id":${idJson},"error":{"code":-32601,"message":${JSON.stringify(`the method ${method} does not exist/is not available`)}}}`
      } else if (rule?.answerError) {
        answer = `{"jsonrpc":"2.0","id":${idJson},"error":${JSON.stringify(rule.answerError)}}`
      } else if (rule?.answerNull) {
        answer = `{"jsonrpc":"2.0","id":${idJson},"result":null}`
      } else {
        if (rule?.delayMs) await delay(rule.delayMs)
        count(forwarded, method)
        answer = (await post(JSON.stringify(call))).text
        if (rule?.alter) {
          const parsed = JSON.parse(answer) as { result?: unknown; error?: unknown }
          if (parsed.error === undefined) answer = JSON.stringify({ ...parsed, result: rule.alter(parsed.result, { method, params: c.params }) })
        }
      }
      return notification ? undefined : answer
    } finally {
      release()
    }
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      bodies.push(body)
      let parsed: unknown
      try {
        parsed = JSON.parse(body)
      } catch {
        // Not JSON: the node answers it as it would.
        post(body).then(
          (a) => res.writeHead(a.status, { 'content-type': 'application/json' }).end(a.text),
          () => res.writeHead(502).end(),
        )
        return
      }
      const answered = Array.isArray(parsed)
        ? Promise.all(parsed.map(handle)).then((parts) => {
            const kept = parts.filter((p): p is string => p !== undefined)
            return kept.length === 0 ? undefined : `[${kept.join(',')}]`
          })
        : handle(parsed)
      answered.then(
        (text) => (text === undefined ? res.writeHead(204).end() : res.writeHead(200, { 'content-type': 'application/json' }).end(text)),
        () => res.writeHead(502).end(),
      )
    })
  })
  const listener = await listenLocal(server, 'the fault proxy')

  const proxy: FaultProxy = {
    url: `http://127.0.0.1:${listener.port}`,
    set: (match, rule) => void rules.set(match, rule),
    clear: (match) => (match === undefined ? rules.clear() : void rules.delete(match)),
    workers: undefined,
    received: (method) => total(received, method),
    forwarded: (method) => total(forwarded, method),
    waited: (method) => total(waited, method),
    bodies,
    get queued() {
      return waiting.length
    },
    close: () => {
      for (const timer of delays) clearTimeout(timer)
      server.closeAllConnections()
      return listener.close()
    },
  }
  return proxy
}
