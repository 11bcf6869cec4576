import { parseCommandArgs, required } from '../args.js'
import { openCommandContext } from '../context.js'
import { selectNodes } from '../../accounts/commands.js'
import { systemClock } from '../../../actors/runtime/clock.js'
import { KeyCipher, secretFromEnv } from '../../keys/key-cipher.js'
import { parseNodes } from '../parse-nodes.js'

/** `tollgate accounts nodes --config FILE --account ID --nodes eth-1:full,bsc-1:archive` */
export async function accountsNodesCommand(args: string[]): Promise<void> {
  const v = parseCommandArgs('accounts nodes', args, {
    config: { type: 'string' },
    account: { type: 'string' },
    nodes: { type: 'string' },
  })
  const configPath = required('accounts nodes', 'config', v.config)
  const accountId = required('accounts nodes', 'account', v.account)
  const nodes = parseNodes(required('accounts nodes', 'nodes', v.nodes))
  const ctx = await openCommandContext(configPath)
  try {
    const out = await selectNodes(
      { log: ctx.log, store: ctx.store, catalog: ctx.catalog, cipher: KeyCipher.fromSecret(secretFromEnv()), clock: systemClock, projector: ctx.projector },
      { accountId, nodes, networks: Object.keys(ctx.config.networks) },
    )
    process.stdout.write(JSON.stringify(out) + '\n')
  } finally {
    await ctx.close()
  }
}
