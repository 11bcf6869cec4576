import { mkdirSync, realpathSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileLockHolder, takeFileLock } from './file-lock.js'
import { UntrustedLockFileError } from './errors.js'
import type { HeldLock, LockHolder } from './process-lock.js'
import { tollgateCommandLine } from './process-title.js'
import { DataDirInUseError } from './errors.js'

/** The lock file in the data folder (see takeFileLock). */
export const LOCK_FILE = 'tollgate.lock'

/** Who asks for the folder: the advice differs. */
export type DataDirUser = 'gateway' | 'replay'

/**
 * Hold `dataDir` for this process while it runs: a gateway (or the supervisor of its workers) and
 * `tollgate replay` each need it alone. A replay under a live gateway rebuilds the projections the
 * gateway reads and writes; two gateways on one folder share an outbox and projections that are
 * one process's. A folder held by a process that was killed is free again at once (the lock goes
 * with the process: a flock on `<dataDir>/tollgate.lock`, see takeFileLock). The other commands (events, accounts, usage) read the log
 * beside a running gateway by design and take no lock.
 * @throws DataDirInUseError naming the holder's pid and what to do
 * @example
 * const lock = await lockDataDir(config.dataDir, 'replay', 'tollgate replay')
 * try { await replay(...) } finally { await lock.release() }
 */
export async function lockDataDir(dataDir: string, user: DataDirUser, role: string): Promise<HeldLock> {
  const dir = resolve(dataDir)
  mkdirSync(dir, { recursive: true })
  // Through symlinks to the folder itself: the same folder reached two ways is one lock file.
  const real = realpathSync(dir)
  const got = takeFileLock(join(real, LOCK_FILE), role, statSync(real).uid)
  if ('held' in got) return got.held
  const who = describe(got.holder)
  throw new DataDirInUseError(
    user === 'replay'
      ? `the data folder ${dir} is in use by ${who}: a replay rebuilds the projections it reads and writes. Stop it first (SIGTERM or Ctrl-C), then run the replay again`
      : `the data folder ${dir} ("dataDir" in the config) is in use by ${who}: a data folder belongs to one gateway (or one replay) at a time, its projections and outbox are one process's. ` +
          'Stop the other process or wait for it to end, or give this gateway a dataDir of its own; to run several gateway processes on one port and one folder, use "workers" in the config',
  )
}

/**
 * The process that holds `dataDir` now (a gateway, the supervisor of its workers, a replay), or
 * undefined when none does: how `tollgate reload` finds the gateway of a config. Checked before it
 * is named (see fileLockHolder): the lock file is the folder owner's, its lock is held, the pid in
 * it has it open, and that pid is a tollgate command's process (its title, see nameProcess);
 * anything else throws, saying what was found. Together no one but the folder's owner can name a
 * pid, and only a tollgate process that holds the file is named: a `sleep`, a shell or an editor
 * that has the file open is not.
 * @throws UntrustedLockFileError naming what was found and what to do
 */
export async function dataDirHolder(dataDir: string): Promise<LockHolder | undefined> {
  let dir: string
  try {
    dir = realpathSync(resolve(dataDir))
  } catch {
    return undefined
  }
  const path = join(dir, LOCK_FILE)
  const holder = fileLockHolder(path, statSync(dir).uid)
  if (holder === undefined || process.platform !== 'linux') return holder
  const commandLine = tollgateCommandLine(holder.pid)
  if (commandLine?.tollgate !== true) {
    const seen = commandLine === undefined ? 'no command line in /proc' : `its command line is "${commandLine.text}"`
    throw new UntrustedLockFileError(
      `the lock file ${path} names pid ${holder.pid}, which has it open but is not a tollgate process (${seen}): it is not signalled. ` +
        'Stop that process, then start the gateway again (or send SIGHUP to the gateway yourself)',
    )
  }
  return holder
}

function describe(holder: LockHolder | undefined): string {
  return holder === undefined ? 'another process (it did not say which)' : `${holder.role} (pid ${holder.pid}, running since ${holder.since})`
}
