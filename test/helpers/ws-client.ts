import { request } from 'node:http'
import { randomBytes } from 'node:crypto'
import { WebSocket } from 'undici'

/** A JSON-RPC client over a real WebSocket (undici's), for tests. */
export interface WsClient {
  /** Send one request (or a batch, or raw text) and resolve with the answer text parsed. */
  call(body: unknown): Promise<any>
  /** Send raw text without waiting for an answer. */
  send(body: unknown): void
  /** The next notification of subscription `id`, or undefined after `withinMs`. */
  nextNotification(id: string, withinMs?: number): Promise<any | undefined>
  /**
   * Notification `index` (0: the first) of subscription `id`, whether it came already or comes
   * within `withinMs`: for a notification that an action may bring before the test awaits it
   * (take `notifications(id).length` before the action as the index).
   */
  notificationAt(id: string, index: number, withinMs?: number): Promise<any | undefined>
  /** Notifications received so far for subscription `id`. */
  notifications(id: string): any[]
  /** The same, as the texts that came over the wire (what a notification's units are counted from). */
  notificationTexts(id: string): string[]
  /** Every message received, in order (answers and notifications). */
  readonly messages: any[]
  /** Resolves when the connection closes, with its code and reason. */
  readonly closed: Promise<{ code: number; reason: string }>
  close(): Promise<void>
}

/**
 * Connect and resolve once open; rejects when the upgrade is refused.
 * @example const ws = await connectWs(`${tg.wsUrl('eth-1')}?apikey=${apiKey}`)
 */
export function connectWs(url: string, init: { headers?: Record<string, string> } = {}): Promise<WsClient> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, init.headers ? ({ headers: init.headers } as never) : undefined)
    const messages: any[] = []
    const byId = new Map<string, (v: any) => void>()
    const subs = new Map<string, any[]>()
    const texts = new Map<string, string[]>()
    const waiters = new Map<string, Array<(v: any) => void>>()
    // Told of every notification (notificationAt): each decides whether its index came.
    const watchers = new Set<() => void>()
    let resolveClosed!: (v: { code: number; reason: string }) => void
    const closed = new Promise<{ code: number; reason: string }>((r) => (resolveClosed = r))
    const keyOf = (msg: any): string | undefined => {
      if (Array.isArray(msg))
        return msg.length === 0
          ? 'null'
          : msg
              .map((m) => JSON.stringify(m?.id ?? null))
              .sort()
              .join(',')
      return 'id' in msg ? JSON.stringify(msg.id) : undefined
    }
    ws.onmessage = (ev) => {
      const text = String(ev.data)
      const msg = JSON.parse(text)
      messages.push(msg)
      if (!Array.isArray(msg) && msg.method === 'eth_subscription') {
        const id = msg.params.subscription
        const list = subs.get(id) ?? []
        list.push(msg)
        subs.set(id, list)
        const raw = texts.get(id) ?? []
        raw.push(text)
        texts.set(id, raw)
        const w = waiters.get(id)?.shift()
        if (w) w(msg)
        for (const watch of [...watchers]) watch()
        return
      }
      const k = keyOf(msg)
      const pending = k === undefined ? undefined : byId.get(k)
      if (pending) {
        byId.delete(k!)
        pending(msg)
      }
    }
    ws.onclose = (ev) => resolveClosed({ code: ev.code, reason: ev.reason })
    ws.onerror = () => {
      const where = `WebSocket to ${url.replace(/apikey=[^&]+/, 'apikey=…')} failed`
      // undici does not say how the upgrade was refused: one more attempt, on this failing path
      // only, names the status and the gateway's message in the test's output.
      tryUpgrade(url, init.headers).then(
        (again) => reject(new Error(`${where}; an upgrade tried again got ${again.status} ${JSON.stringify(again.body ?? '')}`)),
        (err) => reject(new Error(`${where}; an upgrade tried again failed too: ${(err as Error).message}`)),
      )
    }
    ws.onopen = () => {
      const send = (body: unknown) => ws.send(typeof body === 'string' ? body : JSON.stringify(body))
      resolve({
        messages,
        closed,
        send,
        call(body) {
          let value = body
          if (typeof body === 'string') {
            try {
              value = JSON.parse(body)
            } catch {
              value = {} // not JSON: answered with id null
            }
          }
          const k = (value !== null && typeof value === 'object' ? keyOf(value) : undefined) ?? 'null'
          return new Promise((res) => {
            byId.set(k, res)
            send(body)
          })
        },
        notifications: (id) => subs.get(id) ?? [],
        notificationTexts: (id) => texts.get(id) ?? [],
        nextNotification(id, withinMs = 10_000) {
          return new Promise((res) => {
            const timer = setTimeout(() => {
              const list = waiters.get(id) ?? []
              waiters.set(
                id,
                list.filter((w) => w !== waiter),
              )
              res(undefined)
            }, withinMs)
            const waiter = (v: any) => {
              clearTimeout(timer)
              res(v)
            }
            const list = waiters.get(id) ?? []
            list.push(waiter)
            waiters.set(id, list)
          })
        },
        notificationAt(id, index, withinMs = 10_000) {
          const came = subs.get(id)?.[index]
          if (came !== undefined) return Promise.resolve(came)
          return new Promise((res) => {
            const watch = (): void => {
              const now = subs.get(id)?.[index]
              if (now === undefined) return
              clearTimeout(timer)
              watchers.delete(watch)
              res(now)
            }
            const timer = setTimeout(() => {
              watchers.delete(watch)
              res(undefined)
            }, withinMs)
            watchers.add(watch)
          })
        },
        async close() {
          if (ws.readyState === WebSocket.CLOSED) return
          ws.close()
          await closed
        },
      })
    }
  })
}

/**
 * Attempt a WebSocket upgrade with plain HTTP and report how it was answered: 101 (then the
 * socket is closed at once), or the refusal's status, headers and body.
 */
export function tryUpgrade(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: any }> {
  const u = new URL(url.replace(/^ws/, 'http'))
  return new Promise((resolve, reject) => {
    const req = request({
      host: u.hostname,
      port: u.port,
      path: u.pathname + u.search,
      headers: {
        Connection: 'Upgrade',
        Upgrade: 'websocket',
        'Sec-WebSocket-Key': randomBytes(16).toString('base64'),
        'Sec-WebSocket-Version': '13',
        ...headers,
      },
    })
    req.on('upgrade', (res, socket) => {
      socket.destroy()
      resolve({ status: res.statusCode ?? 101, headers: res.headers, body: undefined })
    })
    req.on('response', (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (d: string) => (text += d))
      res.on('end', () => {
        let body: any
        try {
          body = JSON.parse(text)
        } catch {
          body = text
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body })
      })
    })
    req.on('error', reject)
    req.end()
  })
}
