import { readdirSync, readFileSync, readlinkSync } from 'node:fs'

/**
 * What this process holds open, read from Linux's /proc: files (descriptors and memory maps,
 * which is how LMDB holds its environments) and TCP connections. Tests use it to check that a
 * part closed really let go, as the kernel sees it.
 */

/** Open descriptors and memory-mapped files of this process under `dir`. */
export function filesHeldUnder(dir: string): string[] {
  const held = new Set<string>()
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`)
      if (target.startsWith(dir)) held.add(target)
    } catch {
      // The descriptor of the directory listing itself, closed by now.
    }
  }
  for (const line of readFileSync('/proc/self/maps', 'utf8').split('\n')) {
    const path = line.slice(line.indexOf('/'))
    if (line.includes('/') && path.startsWith(dir)) held.add(path)
  }
  return [...held]
}

/** This process's established TCP connections to `port` on the loopback (IPv4). */
export function connectionsTo(port: number): number {
  const own = new Set<string>()
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`))
      if (match) own.add(match[1]!)
    } catch {
      // closed meanwhile
    }
  }
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0')
  let count = 0
  for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/)
    // sl local_address rem_address st ... inode (the 10th field)
    if (fields.length < 10) continue
    const [, , remote, state, , , , , , inode] = fields
    if (state === '01' && remote!.endsWith(`:${hexPort}`) && own.has(inode!)) count++
  }
  return count
}
