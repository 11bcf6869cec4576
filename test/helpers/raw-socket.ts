import { connect, type Socket } from 'node:net'

/**
 * HTTP/1.1 written byte by byte on a plain TCP socket (raw-http.ts reads whole answers on a kept-alive socket; this one watches the bytes and who closed), for what fetch will not send: a
 * Content-Length larger than the body, headers that never end, bytes that are not UTF-8.
 */
export interface RawConnection {
  readonly socket: Socket
  /** Everything the server sent so far, as Latin-1 (one character per byte). */
  received(): string
  /** Resolves when the connection is closed (by either side), with everything the server sent. */
  readonly closed: Promise<string>
  /** Whether the server closed the connection (an end or a reset it sent, not our destroy()). */
  closedByServer(): boolean
  write(data: string | Buffer): void
  /** Resolves with the first complete response, or undefined if the connection closes before one. */
  response(): Promise<RawResponse | undefined>
}

export interface RawResponse {
  status: number
  /** Header names in lower case. */
  headers: Record<string, string>
  body: string
}

/** Connect to 127.0.0.1:`port`. */
export function rawConnect(port: number): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    let text = ''
    let byServer = false
    const waiting: Array<() => void> = []
    const closed = new Promise<string>((r) => socket.on('close', () => r(text)))
    socket.on('data', (c: Buffer) => {
      text += c.toString('latin1')
      for (const w of waiting.splice(0)) w()
    })
    socket.on('end', () => (byServer = true))
    socket.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ECONNRESET' || err.code === 'EPIPE') byServer = true
    })
    socket.on('close', () => {
      for (const w of waiting.splice(0)) w()
    })
    socket.once('connect', () =>
      resolve({
        socket,
        received: () => text,
        closed,
        closedByServer: () => byServer,
        write: (data) => {
          if (!socket.destroyed) socket.write(data)
        },
        response: () =>
          new Promise((r) => {
            const check = (): void => {
              const parsed = parseResponse(text)
              if (parsed !== undefined) return r(parsed)
              if (socket.destroyed || socket.readableEnded) return r(undefined)
              waiting.push(check)
            }
            check()
          }),
      }),
    )
    socket.once('error', reject)
  })
}

/** The first complete HTTP/1.1 response in `text` (body by Content-Length), or undefined. */
export function parseResponse(text: string): RawResponse | undefined {
  const end = text.indexOf('\r\n\r\n')
  if (end < 0) return undefined
  const [statusLine, ...lines] = text.slice(0, end).split('\r\n')
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const colon = line.indexOf(':')
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
  }
  const length = Number(headers['content-length'] ?? 0)
  if (text.length - end - 4 < length) return undefined
  return { status: Number(statusLine.split(' ')[1]), headers, body: Buffer.from(text.slice(end + 4, end + 4 + length), 'latin1').toString('utf8') }
}

/** A POST request's head (no body) for `path`, with the given headers. */
export function postHead(path: string, headers: Record<string, string | number> = {}): string {
  const lines = Object.entries({ Host: '127.0.0.1', 'Content-Type': 'application/json', ...headers }).map(([k, v]) => `${k}: ${v}\r\n`)
  return `POST ${path} HTTP/1.1\r\n${lines.join('')}\r\n`
}
