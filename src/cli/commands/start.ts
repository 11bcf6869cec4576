import { parseCommandArgs, required } from '../args.js'
import { loadConfig } from '../../config/load.js'
import { secretFromEnv } from '../../keys/key-cipher.js'
import { startGateway } from '../../gateway/gateway.js'
import { makeLogger } from '../logger.js'
import { runUntilSignal } from '../run-until-signal.js'

/** `tollgate start --config FILE`: run the gateway until SIGINT or SIGTERM. */
export async function startCommand(args: string[]): Promise<void> {
  const v = parseCommandArgs('start', args, { config: { type: 'string' } })
  const config = loadConfig(required('start', 'config', v.config))
  // Refuse early: without the secret, keys could not be shown to their owners again.
  secretFromEnv()
  const logger = makeLogger('stdout')
  const gateway = await startGateway(config, { logger })
  await runUntilSignal(logger, () => gateway.close(), config.shutdownMs)
}
