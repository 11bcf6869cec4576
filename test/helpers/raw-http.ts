import { connect, type Socket } from 'node:net'

/** One answer read off a raw connection. */
export interface RawAnswer {
  status: number
  /** Header names in lower case. */
  headers: Record<string, string>
  body: string
}

/**
 * An HTTP/1.1 connection driven by hand, for tests that must see the bytes a client sees: a
 * Content-Length where there must be none, a body after a HEAD, whether the socket is still
 * usable for the next request, whether the server closed it.
 */
export class RawConnection {
  readonly #socket: Socket
  #buffer = Buffer.alloc(0)
  #closed = false
  #wake: (() => void) | undefined

  private constructor(socket: Socket) {
    this.#socket = socket
    socket.on('data', (d: Buffer) => {
      this.#buffer = Buffer.concat([this.#buffer, d])
      this.#wake?.()
    })
    socket.on('close', () => {
      this.#closed = true
      this.#wake?.()
    })
    socket.on('error', () => undefined)
  }

  static open(port: number, host = '127.0.0.1'): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, host, () => resolve(new RawConnection(socket)))
      socket.once('error', reject)
    })
  }

  /** The server closed the connection (or it was reset). */
  get closed(): boolean {
    return this.#closed
  }

  write(data: string | Buffer): void {
    this.#socket.write(data)
  }

  /** Send a request: `headers` as written, Content-Length added when there is a body. */
  send(method: string, path: string, headers: Record<string, string> = {}, body?: string): void {
    const lines = [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1']
    for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`)
    if (body !== undefined) lines.push(`Content-Length: ${Buffer.byteLength(body)}`)
    this.#socket.write(`${lines.join('\r\n')}\r\n\r\n${body ?? ''}`)
  }

  /**
   * Read one answer. Its body is Content-Length bytes, none for HEAD, 204 and 304. Rejects when
   * the server closes the connection first, or nothing complete arrives within `withinMs`.
   */
  async read(opts: { head?: boolean; withinMs?: number } = {}): Promise<RawAnswer> {
    const deadline = Date.now() + (opts.withinMs ?? 10_000)
    for (;;) {
      const answer = this.#parse(opts.head === true)
      if (answer) return answer
      if (this.#closed) throw new Error(`the server closed the connection; received ${JSON.stringify(this.#buffer.toString('latin1').slice(0, 200))}`)
      const left = deadline - Date.now()
      if (left <= 0) throw new Error(`no complete answer; received ${JSON.stringify(this.#buffer.toString('latin1').slice(0, 200))}`)
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left)
        this.#wake = () => {
          clearTimeout(timer)
          this.#wake = undefined
          resolve()
        }
      })
    }
  }

  /** Resolves once the server has closed the connection, or false after `withinMs`. */
  async waitClosed(withinMs = 10_000): Promise<boolean> {
    const deadline = Date.now() + withinMs
    while (!this.#closed && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
    return this.#closed
  }

  /** Bytes received and not yet read as an answer. */
  get unread(): string {
    return this.#buffer.toString('latin1')
  }

  destroy(): void {
    this.#socket.destroy()
  }

  #parse(head: boolean): RawAnswer | undefined {
    const end = this.#buffer.indexOf('\r\n\r\n')
    if (end < 0) return undefined
    const lines = this.#buffer.subarray(0, end).toString('latin1').split('\r\n')
    const status = Number(lines[0]!.split(' ')[1])
    const headers: Record<string, string> = {}
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':')
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
    }
    const noBody = head || status === 204 || status === 304
    const length = noBody ? 0 : Number(headers['content-length'] ?? 0)
    if (this.#buffer.length < end + 4 + length) return undefined
    const body = this.#buffer.subarray(end + 4, end + 4 + length).toString('utf8')
    this.#buffer = this.#buffer.subarray(end + 4 + length)
    return { status, headers, body }
  }
}
