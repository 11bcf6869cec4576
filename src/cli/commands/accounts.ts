import { parseCommandArgs, required, UsageError } from '../args.js'
import { openCommandContext } from '../context.js'
import { createAccount } from '../../accounts/commands.js'
import { KeyCipher, secretFromEnv } from '../../keys/key-cipher.js'
import { systemClock } from '../../../actors/runtime/clock.js'
import { accountsNodesCommand } from './accounts-nodes.js'
import { parseNodes } from '../parse-nodes.js'

/** `tollgate accounts create --config FILE --wallet 0xADDR --plan ID [--nodes eth-1:full,eth-1:archive]` */
export async function accountsCommand(args: string[]): Promise<void> {
  const [sub, ...rest] = args
  if (sub === 'nodes') return accountsNodesCommand(rest)
  if (sub !== 'create') {
    throw new UsageError(
      `tollgate accounts: unknown subcommand ${JSON.stringify(sub ?? '')}; use: tollgate accounts create --config FILE --wallet 0xADDR --plan ID [--nodes eth-1:full,...] or tollgate accounts nodes --config FILE --account ID --nodes eth-1:full,...`,
    )
  }
  const v = parseCommandArgs('accounts create', rest, {
    config: { type: 'string' },
    wallet: { type: 'string' },
    plan: { type: 'string' },
    nodes: { type: 'string' },
  })
  const configPath = required('accounts create', 'config', v.config)
  const wallet = required('accounts create', 'wallet', v.wallet)
  const planId = required('accounts create', 'plan', v.plan)
  const nodes = v.nodes === undefined ? undefined : parseNodes(v.nodes)
  const cipher = KeyCipher.fromSecret(secretFromEnv())
  const ctx = await openCommandContext(configPath)
  try {
    for (const n of nodes ?? []) {
      if (!ctx.config.networks[n.network]) {
        throw new UsageError(
          `tollgate accounts create: --nodes names network ${JSON.stringify(n.network)}, which the config does not have (it has ${Object.keys(ctx.config.networks).join(', ')})`,
        )
      }
    }
    const out = await createAccount(
      { log: ctx.log, store: ctx.store, catalog: ctx.catalog, cipher, clock: systemClock, projector: ctx.projector },
      { wallet, planId, nodes, networks: Object.keys(ctx.config.networks) },
    )
    process.stdout.write(JSON.stringify({ accountId: out.accountId, keyId: out.keyId, apiKey: out.apiKey }) + '\n')
  } finally {
    await ctx.close()
  }
}
