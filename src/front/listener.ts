import { uws, type TemplatedApp, type us_listen_socket } from './uws.js'
import type { Exchanges } from './exchanges.js'

/**
 * One uWS app bound to one address, with the exchanges of its routes: the RPC front end and the
 * admin listener each have one. `drain` stops taking connections and makes every answer close its
 * connection (the exchanges in flight go on); `close` closes every socket.
 */
export class Listener {
  readonly #app: TemplatedApp
  readonly #exchanges: Exchanges
  /** The config field that names the address, for the error when it cannot be bound. */
  readonly #field: string
  #socket: us_listen_socket | undefined
  #listening = false

  constructor(app: TemplatedApp, exchanges: Exchanges, field: string) {
    this.#app = app
    this.#exchanges = exchanges
    this.#field = field
  }

  /** Bound and not closed. */
  get listening(): boolean {
    return this.#listening
  }

  /** Listen on host:port (port 0: a free port). Resolves with the port bound. */
  listen(host: string, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      this.#app.listen(host, port, (socket) => {
        if (!socket)
          return reject(new Error(`cannot listen on ${host}:${port}: the port is taken or the address is not local; change "${this.#field}" in the config`))
        this.#socket = socket
        this.#listening = true
        resolve(uws.us_socket_local_port(socket as never))
      })
    })
  }

  /** No new connections, and every answer from now on closes its connection. */
  drain(): void {
    this.#exchanges.drain()
    if (this.#socket) uws.us_listen_socket_close(this.#socket)
    this.#socket = undefined
  }

  /** Close every socket left (idle keep-alive connections included). */
  close(): void {
    this.drain()
    this.#listening = false
    // uWS v20.30's App has close() (every socket, listen sockets included); its typings lack it.
    ;(this.#app as TemplatedApp & { close(): void }).close()
  }
}
