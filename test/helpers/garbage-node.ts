import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { WebSocketServer, type WebSocket } from 'ws'
import { listenLocal } from './listen-local.js'

/**
 * A JSON-RPC "node" that answers garbage on purpose, the way broken nodes and the proxies in
 * front of them do. It is a stub, not a node: for tests that are ABOUT a misbehaving node (a real
 * anvil stands beside it where a healthy node is needed).
 *
 * `mode` says how it answers the next HTTP calls; `ok` answers every call with `"0x1"`, so that
 * the gateway's start-up head poll finds it in step.
 */
export type GarbageMode =
  | 'ok'
  /** 200, a JSON answer cut off in the middle (Content-Length matches what is sent). */
  | 'truncated'
  /** 500 with a proxy's HTML error page. */
  | 'html-500'
  /** The request is read, then the connection is reset (TCP RST). */
  | 'reset'
  /** 200 with an empty body. */
  | 'empty-200'
  /** 200 with a valid 50 MB answer, streamed without Content-Length. */
  | 'huge'
  /** 200 with a valid answer, one byte a second. */
  | 'trickle'

/** How its WebSocket answers calls: `ok` as above, or garbage in some way. */
export type GarbageWsMode =
  | 'ok'
  /** A text frame that is not JSON. */
  | 'not-json'
  /** The answer with our id, cut off. */
  | 'truncated'
  /** A valid answer of HUGE_WS_BYTES, in one frame. */
  | 'huge'

export const HUGE_BYTES = 50 * 1024 * 1024
/** Over a test gateway's limit of 1 MiB: enough to be refused, quick to send on a loaded machine. */
export const HUGE_WS_BYTES = 2 * 1024 * 1024

export const HTML_500 = '<html><head><title>500 Internal Server Error</title></head><body><h1>500 Internal Server Error</h1></body></html>'

export interface GarbageNode {
  /** HTTP JSON-RPC URL. */
  readonly url: string
  /** WebSocket URL. */
  readonly wsUrl: string
  mode: GarbageMode
  wsMode: GarbageWsMode
  /** HTTP calls received, by mode they were answered in. */
  readonly answered: Record<GarbageMode, number>
  /**
   * WebSocket calls received, but for eth_subscribe: a gateway subscribes to every node's newHeads
   * at each (re)connection, on its own time, and that is not a call the tests make.
   */
  wsCalls: number
  /** Bytes of the last `huge` answer written before the gateway hung up (resolves when it did). */
  lastHuge: Promise<number> | undefined
  /** Send a text frame that answers nothing on every open WebSocket. */
  sendUnsolicited(text: string): void
  /** WebSocket connections the gateway opened so far. */
  wsConnections: number
  close(): Promise<void>
}

export async function startGarbageNode(): Promise<GarbageNode> {
  const wsClients = new Set<WebSocket>()
  const timers = new Set<NodeJS.Timeout>()
  const node: GarbageNode = {
    url: '',
    wsUrl: '',
    mode: 'ok',
    wsMode: 'ok',
    answered: { ok: 0, truncated: 0, 'html-500': 0, reset: 0, 'empty-200': 0, huge: 0, trickle: 0 },
    wsCalls: 0,
    lastHuge: undefined,
    wsConnections: 0,
    sendUnsolicited: (text) => {
      for (const ws of wsClients) ws.send(text)
    },
    close: async () => {},
  }

  const answer = (req: IncomingMessage, res: ServerResponse, body: string): void => {
    const mode = node.mode
    node.answered[mode]++
    const id = idOf(body)
    const good = `{"jsonrpc":"2.0","id":${id},"result":"0x1"}`
    switch (mode) {
      case 'ok':
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(good)
      case 'truncated': {
        const cut = good.slice(0, good.length - 6)
        return void res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(cut.length) }).end(cut)
      }
      case 'html-500':
        return void res.writeHead(500, { 'content-type': 'text/html; charset=utf-8' }).end(HTML_500)
      case 'reset':
        return void req.socket.resetAndDestroy()
      case 'empty-200':
        return void res.writeHead(200, { 'content-type': 'application/json', 'content-length': '0' }).end()
      case 'huge':
        node.lastHuge = streamHuge(res, id)
        return
      case 'trickle': {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(good.length) })
        let i = 0
        const tick = (): void => {
          if (res.destroyed) return
          res.write(good[i++])
          if (i === good.length) return void res.end()
          const timer = setTimeout(() => {
            timers.delete(timer)
            tick()
          }, 1000)
          timers.add(timer)
        }
        return tick()
      }
    }
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => answer(req, res, Buffer.concat(chunks).toString()))
  })

  const wss = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024 })
  server.on('upgrade', (req, socket, head) => {
    wss.handleUpgrade(req, socket, head, (ws) => {
      node.wsConnections++
      wsClients.add(ws)
      ws.on('close', () => wsClients.delete(ws))
      ws.on('message', (data) => {
        if (!String(data).includes('"eth_subscribe"')) node.wsCalls++
        const id = idOf(String(data))
        const good = `{"jsonrpc":"2.0","id":${id},"result":"0x1"}`
        switch (node.wsMode) {
          case 'ok':
            return ws.send(good)
          case 'not-json':
            return ws.send('this is not JSON-RPC at all')
          case 'truncated':
            return ws.send(good.slice(0, good.length - 6))
          case 'huge':
            return ws.send(hugeAnswer(id, HUGE_WS_BYTES))
        }
      })
    })
  })

  const { port, close } = await listenLocal(server, 'the garbage node')
  ;(node as { url: string }).url = `http://127.0.0.1:${port}`
  ;(node as { wsUrl: string }).wsUrl = `ws://127.0.0.1:${port}`
  node.close = async () => {
    for (const timer of timers) clearTimeout(timer)
    for (const ws of wsClients) ws.terminate()
    wss.close()
    await close()
  }
  return node
}

/** The id of a JSON-RPC call as JSON text (a batch: its first call's). */
function idOf(body: string): string {
  try {
    const call = JSON.parse(body) as { id?: unknown } | Array<{ id?: unknown }>
    return JSON.stringify((Array.isArray(call) ? call[0]?.id : call.id) ?? null)
  } catch {
    return 'null'
  }
}

/** A valid answer of `size` bytes: a long hex string as the result. */
function hugeAnswer(id: string, size: number): string {
  const head = `{"jsonrpc":"2.0","id":${id},"result":"0x`
  return head + 'a'.repeat(size - head.length - 2) + '"}'
}

/**
 * Stream a valid 50 MB answer in 64 KiB chunks, honouring back-pressure, until it is all sent or
 * the gateway hangs up; resolves with the bytes written by then.
 */
function streamHuge(res: ServerResponse, id: string): Promise<number> {
  return new Promise((resolve) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    const head = `{"jsonrpc":"2.0","id":${id},"result":"0x`
    const chunk = Buffer.alloc(64 * 1024, 'a')
    let sent = 0
    let done = false
    const finish = (): void => {
      if (done) return
      done = true
      resolve(sent)
    }
    res.on('close', finish)
    res.write(head)
    sent += head.length
    const pump = (): void => {
      while (!res.destroyed) {
        if (sent + chunk.length + 2 >= HUGE_BYTES) {
          const last = HUGE_BYTES - sent - 2
          res.end(Buffer.concat([chunk.subarray(0, last), Buffer.from('"}')]))
          sent = HUGE_BYTES
          return
        }
        sent += chunk.length
        if (!res.write(chunk)) return void res.once('drain', pump)
      }
    }
    pump()
  })
}
