import { uws, type TemplatedApp, type us_listen_socket } from './uws.js'
import type { Exchanges } from './exchanges.js'
import { portUnavailable, probePort } from './port-probe.js'

/**
 * uSockets' listen options: by default it sets SO_REUSEPORT, and Linux then lets any other
 * process of the same user bind the same port and hands it part of the new connections (a second
 * gateway started by mistake answered 5 calls of 6 with "not a key this gateway issued").
 * LIBUS_LISTEN_EXCLUSIVE_PORT binds without it: the bind fails while anyone serves the port.
 */
const LIBUS_LISTEN_DEFAULT = 0
const LIBUS_LISTEN_EXCLUSIVE_PORT = 1

export interface ListenOptions {
  /**
   * Share the port with the other workers of the same supervisor (SO_REUSEPORT), which checked
   * that nobody else serves it before starting them (src/workers/). Default: exclusive.
   */
  shared?: boolean
}

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

  /**
   * Listen on host:port (port 0: a free port), alone on it unless `shared`. Resolves with the port
   * bound; rejects with a PortUnavailableError that says why (the port served by another process,
   * an address that is not local) and what to do.
   */
  listen(host: string, port: number, opts: ListenOptions = {}): Promise<number> {
    const options = opts.shared ? LIBUS_LISTEN_DEFAULT : LIBUS_LISTEN_EXCLUSIVE_PORT
    return new Promise((resolve, reject) => {
      // uWS v20.30 takes (host, port, options, cb); its typings list options only without a host.
      const listen = this.#app.listen as unknown as (host: string, port: number, options: number, cb: (socket: us_listen_socket | false) => void) => void
      listen.call(this.#app, host, port, options, (socket) => {
        // uWS says only that it failed: a plain bind of the same address tells why.
        if (!socket) return void probePort(host, port).then((code) => reject(portUnavailable(host, port, this.#field, code)))
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
