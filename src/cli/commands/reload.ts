import { resolve } from 'node:path'
import { parseCommandArgs, required } from '../args.js'
import { loadConfig } from '../../config/load.js'
import { dataDirHolder } from '../../main/data-dir-lock.js'

/**
 * `tollgate reload --config FILE`: check the file, then send SIGHUP to the gateway that holds the
 * config's data folder (the process itself, or the supervisor of its workers, which passes it on),
 * found through the folder's lock file, checked to be held by the pid it names (see
 * src/main/data-dir-lock.ts): a stale or planted file names no process to signal. The
 * gateway reads the file again and logs `config reloaded` with what changed, or `reload refused`
 * with why; its log is where the outcome is. A file that fails its checks is not sent at all.
 * Its last line on stdout is JSON: the pid and what the process is.
 */
export async function reloadCommand(args: string[]): Promise<void> {
  const v = parseCommandArgs('reload', args, { config: { type: 'string' } })
  // The gateway would refuse it anyway; saying so here names the field to the operator at once.
  const config = loadConfig(required('reload', 'config', v.config))
  const dir = resolve(config.dataDir)
  const holder = await dataDirHolder(dir)
  if (holder === undefined) {
    throw new Error(
      `no gateway holds the data folder ${dir} ("dataDir" in the config): is it running, with this config? (start it with tollgate start --config FILE)`,
    )
  }
  if (!holder.role.startsWith('a gateway')) {
    throw new Error(`the data folder ${dir} is held by ${holder.role} (pid ${holder.pid}), not a gateway: nothing to reload`)
  }
  process.kill(holder.pid, 'SIGHUP')
  process.stderr.write(`sent SIGHUP to ${holder.role} (pid ${holder.pid}); its log says what changed ("config reloaded") or why not ("reload refused")\n`)
  process.stdout.write(JSON.stringify({ pid: holder.pid, role: holder.role }) + '\n')
}
