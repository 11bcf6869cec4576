import { spawnSync } from 'node:child_process'
import { closeSync, constants, fchmodSync, fstatSync, ftruncateSync, openSync, readFileSync, readlinkSync, readdirSync, writeSync } from 'node:fs'
import type { HeldLock, LockHolder } from './process-lock.js'
import { FileLockUnavailable, UntrustedLockFileError } from './errors.js'

/**
 * What `flock(1)` exits with when the lock is held by another open file: chosen (its `-E`), so
 * that "held" is never confused with flock's own failures (1, and 64 and up for bad usage).
 */
const HELD_EXIT = 75

/** Group and others may write: anyone in them could name any pid in the file. */
const WRITABLE_BY_OTHERS = 0o022

/**
 * Take the lock of the file `path` for this process, or learn who holds it. The lock is flock(2)
 * on the file: the kernel lets go of it when the process ends, however it ends (SIGKILL, a crash),
 * so a lock is never stale, and two processes never both hold it. The file is created 0600 in the
 * data folder, so only the folder's owner can make or replace it (an abstract socket, used before,
 * could be bound by any local user: a fake lock naming another pid made `tollgate reload` signal
 * that pid). Node has no flock, so util-linux's `flock --nonblock` takes it on our open file
 * description, passed as its fd 3: a flock belongs to the description, and stays held through
 * our descriptor once flock(1) has exited, until we close it. The holder's pid, role and start time
 * are written into the file for those that find it taken. The file must be this process's user's or
 * `folderOwner`'s (root may run a command on a folder another user owns).
 * @throws FileLockUnavailable flock(1) missing or failing
 * @throws UntrustedLockFileError another user's file, or a symbolic link
 * @example
 * const got = takeFileLock('/var/lib/tollgate/tollgate.lock', 'a gateway', statSync('/var/lib/tollgate').uid)
 * if ('holder' in got) throw new Error(`held by pid ${got.holder?.pid}`)
 */
export function takeFileLock(path: string, role: string, folderOwner: number): { held: HeldLock } | { holder: LockHolder | undefined } {
  const fd = openLockFile(path, constants.O_RDWR | constants.O_CREAT)
  let kept = false
  try {
    const stat = fstatSync(fd)
    // Another user's file in the folder (one others may write to) could name any pid as its holder,
    // and hold its lock to keep the gateway out: refused by name rather than believed.
    if (stat.uid !== process.geteuid?.() && stat.uid !== folderOwner) {
      throw new UntrustedLockFileError(
        `the lock file ${path} belongs to uid ${stat.uid}, neither this process's user (uid ${process.geteuid?.()}) nor the data folder's owner (uid ${folderOwner}): another user made it. ` +
          'Remove it, and let only its owner write to the data folder (chmod go-w)',
      )
    }
    // A file of ours left writable by an older version or by hand: `reload` would refuse it.
    if ((stat.mode & WRITABLE_BY_OTHERS) !== 0) fchmodSync(fd, 0o600)
    if (!tryFlock(fd, '--exclusive')) return { holder: readHolder(path) }
    const self: LockHolder = { pid: process.pid, role, since: new Date().toISOString() }
    ftruncateSync(fd, 0)
    writeSync(fd, `${JSON.stringify(self)}\n`, 0)
    kept = true
    let released = false
    return {
      held: {
        release: async () => {
          if (released) return
          released = true
          closeSync(fd) // the last descriptor of the description: the kernel lets the lock go
        },
      },
    }
  } finally {
    if (!kept) closeSync(fd)
  }
}

/**
 * The process that holds the lock of `path` now, checked so that nothing but the real holder can be
 * named: the file is owned by `owner` (the data folder's owner) and writable by it alone, its lock
 * is held now, and the pid written in it has the file open. Undefined when no one holds it.
 * @throws UntrustedLockFileError naming what does not hold (a file of another user, a pid that does not hold it)
 */
export function fileLockHolder(path: string, owner: number): LockHolder | undefined {
  let fd: number
  try {
    fd = openLockFile(path, constants.O_RDONLY)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined // no file: nothing ever held it
    throw err
  }
  try {
    const stat = fstatSync(fd)
    if (stat.uid !== owner)
      throw new UntrustedLockFileError(
        `the lock file ${path} belongs to uid ${stat.uid}, not to the data folder's owner (uid ${owner}): another user made it, or a gateway ran as another user than the folder's owner. ` +
          "Run the gateway as the data folder's owner; remove the file while no gateway runs",
      )
    if ((stat.mode & WRITABLE_BY_OTHERS) !== 0)
      throw new UntrustedLockFileError(
        `the lock file ${path} is writable by others (mode ${(stat.mode & 0o777).toString(8)}): remove it and start the gateway again`,
      )
    // A shared lock we can take means no one holds it exclusively: the file is what a stopped process left.
    if (tryFlock(fd, '--shared')) return undefined
  } finally {
    closeSync(fd)
  }
  const holder = readHolder(path)
  if (holder === undefined) throw new UntrustedLockFileError(`the lock file ${path} is held but does not say by whom`)
  if (process.platform === 'linux' && !holdsOpen(holder.pid, path)) {
    throw new UntrustedLockFileError(`the lock file ${path} names pid ${holder.pid}, which does not have it open: not the holder, so it is not signalled`)
  }
  return holder
}

/**
 * Open the lock file without following a symbolic link: a link planted in a folder others can write
 * to would have the gateway (root, perhaps) create, truncate and write the file it points at.
 */
function openLockFile(path: string, flags: number): number {
  try {
    return openSync(path, flags | constants.O_NOFOLLOW, 0o600)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') {
      throw new UntrustedLockFileError(
        `the lock file ${path} is a symbolic link, which a gateway never makes: remove it, and let only its owner write to the data folder`,
      )
    }
    throw err
  }
}

/** Whether flock(1) took the lock (`--exclusive` or `--shared`) on `fd`, without waiting. */
function tryFlock(fd: number, mode: '--exclusive' | '--shared'): boolean {
  const r = spawnSync('flock', ['--nonblock', '--conflict-exit-code', String(HELD_EXIT), mode, '3'], { stdio: ['ignore', 'ignore', 'pipe', fd] })
  if (r.status === 0) return true
  if (r.status === HELD_EXIT) return false
  const why = r.error !== undefined ? r.error.message : `exit ${r.status}: ${r.stderr?.toString().trim()}`
  throw new FileLockUnavailable(`cannot lock ${mode === '--shared' ? 'or read ' : ''}the data folder's lock file with flock(1) (util-linux): ${why}`)
}

/** What the holder wrote in the file, or undefined when it is empty or not that. */
function readHolder(path: string): LockHolder | undefined {
  try {
    const holder = JSON.parse(readFileSync(path, 'utf8')) as LockHolder
    return typeof holder.pid === 'number' && typeof holder.role === 'string' ? holder : undefined
  } catch {
    return undefined
  }
}

/** Whether process `pid` has the file `path` open (its /proc/<pid>/fd links): the holder does. */
function holdsOpen(pid: number, path: string): boolean {
  try {
    const dir = `/proc/${pid}/fd`
    return readdirSync(dir).some((fd) => {
      try {
        return readlinkSync(`${dir}/${fd}`) === path
      } catch {
        return false
      }
    })
  } catch {
    return false
  }
}
