import { connect, createServer, type Server } from 'node:net'

/** Who holds a lock, as it tells a process that finds the lock taken. */
export interface LockHolder {
  pid: number
  /** What it is, for messages: "a gateway", "tollgate replay", "a gateway supervising 4 workers". */
  role: string
  /** When it took the lock (ISO 8601). */
  since: string
}

/** A lock this process holds until release() or until it exits, however it exits. */
export interface HeldLock {
  release(): Promise<void>
}

/** How long a process that finds a lock taken waits for its holder to say who it is. */
const ASK_HOLDER_MS = 2_000

/**
 * Take the lock `name` for this process, or learn who holds it. The lock is an abstract Unix
 * socket (Linux): binding its name is atomic, and the kernel lets go of it when the process ends,
 * SIGKILL and power cuts included, so a lock is never stale and two processes never both take it.
 * The holder answers a connection with a LockHolder. Any local user can bind any abstract name, so
 * what a holder says is never believed beyond a message, and such a lock may only ever cause a
 * refusal: the supervisor's claim of its port, which a squatter can make refuse the port (as binding
 * the port itself would, for a port above 1023), never a signal. A lock that names a process to
 * signal is a file its owner alone writes (file-lock.ts, the data folder's). Abstract names live in the network
 * namespace: processes in two containers do not see each other's. On other systems (no abstract
 * sockets) every lock is granted.
 * @example
 * const got = await takeLock('tollgate:port:127.0.0.1:8080', 'a gateway supervising 4 workers')
 * if ('holder' in got) throw new Error(`held by pid ${got.holder?.pid}`)
 */
export async function takeLock(name: string, role: string): Promise<{ held: HeldLock } | { holder: LockHolder | undefined }> {
  if (process.platform !== 'linux') return { held: { release: async () => undefined } }
  const self: LockHolder = { pid: process.pid, role, since: new Date().toISOString() }
  const server = createServer((socket) => socket.end(JSON.stringify(self)))
  const path = `\0${name}`
  const bound = await new Promise<boolean>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => (err.code === 'EADDRINUSE' ? resolve(false) : reject(err)))
    server.listen({ path }, () => resolve(true))
  })
  if (!bound) return { holder: await askHolder(path) }
  // Held for the process's life, but never the reason it stays alive.
  server.unref()
  return { held: { release: () => close(server) } }
}

/** The holder's answer, or undefined when it does not give one in time (a process stopped with SIGSTOP). */
function askHolder(path: string): Promise<LockHolder | undefined> {
  return new Promise((resolve) => {
    let text = ''
    const socket = connect({ path })
    const timer = setTimeout(() => socket.destroy(), ASK_HOLDER_MS)
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => (text += chunk))
    socket.on('error', () => undefined)
    socket.on('close', () => {
      clearTimeout(timer)
      try {
        const holder = JSON.parse(text) as LockHolder
        resolve(typeof holder.pid === 'number' ? holder : undefined)
      } catch {
        resolve(undefined)
      }
    })
  })
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()))
}
