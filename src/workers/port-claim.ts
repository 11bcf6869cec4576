import type { Config } from '../config/types.js'
import { portUnavailable, probePort } from '../front/port-probe.js'
import { PortUnavailableError } from '../front/errors.js'
import { takeLock, type HeldLock } from '../main/process-lock.js'

/**
 * What a supervisor checks before its workers bind `listen` together with SO_REUSEPORT (a bind
 * that lets in any process of the same user that asks the same way): that no other process serves
 * the port, and that the admin port of each worker (admin.listen.port + its index) is free. The
 * claim is a lock on the address held for the supervisor's life, so that two supervisors started
 * at the same moment cannot both find the port free and then share it. A gateway of one process
 * needs none of this: it binds without SO_REUSEPORT, which fails while anyone serves the port.
 * A process that takes the port between this check and the first worker's bind makes that
 * worker's bind fail, and the worker exits saying so.
 * @throws PortUnavailableError naming the port, its config field and what to do
 */
export async function claimWorkerPorts(config: Config, workers: number): Promise<HeldLock> {
  const { host, port } = config.listen
  const got = await takeLock(`tollgate:port:${host}:${port}`, `a gateway supervising ${workers} workers`)
  if ('holder' in got) {
    const who = got.holder === undefined ? 'another gateway supervisor' : `${got.holder.role} (pid ${got.holder.pid})`
    throw new PortUnavailableError(
      `cannot listen on ${host}:${port} ("listen" in the config): ${who} claims that port for its workers. Stop it, or set "listen.port" to a free port`,
    )
  }
  try {
    const code = await probePort(host, port)
    if (code !== undefined) throw portUnavailable(host, port, 'listen', code)
    const admin = config.admin.listen
    // Port 0: each worker takes a free admin port of its own.
    for (let index = 0; admin.port !== 0 && index < workers; index++) {
      const adminCode = await probePort(admin.host, admin.port + index)
      if (adminCode !== undefined) {
        const err = portUnavailable(admin.host, admin.port + index, 'admin.listen', adminCode)
        throw new PortUnavailableError(`worker ${index} has its admin listener on admin.listen.port + ${index}: ${err.message}`)
      }
    }
    return got.held
  } catch (err) {
    await got.held.release()
    throw err
  }
}
