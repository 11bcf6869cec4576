import { parseCommandArgs, required } from '../args.js'
import { UsageError } from '../errors.js'
import { openCommandContext } from '../context.js'
import { openAccount, type OpenedAccount } from '../../accounts/commands.js'
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
    const out = await openAccount(
      { log: ctx.log, store: ctx.store, catalog: ctx.catalog, cipher, clock: systemClock, projector: ctx.projector },
      { wallet, planId, nodes, networks: Object.keys(ctx.config.networks) },
    )
    if (out.outcome === 'exists') process.stderr.write(`tollgate accounts create: account ${out.accountId} exists: nothing was changed\n`)
    process.stdout.write(`${JSON.stringify(answerOf(out, configPath))}\n`)
  } finally {
    await ctx.close()
  }
}

/**
 * The last stdout line: `{ accountId, keyId, apiKey }` for a new key, as scripts read it; for an
 * account that was open already, what it has and a note that nothing changed (run twice, the
 * command is idempotent: before, it revoked the key and restarted the plan period).
 */
function answerOf(out: OpenedAccount, configPath: string): Record<string, unknown> {
  if (out.apiKey !== undefined) return { accountId: out.accountId, keyId: out.keyId, apiKey: out.apiKey }
  const regenerate = `tollgate keys regenerate --config ${configPath} --account ${out.accountId}`
  if (out.outcome === 'private-activated') {
    return {
      accountId: out.accountId,
      keyId: out.keyId,
      planId: out.planId,
      note: `the Private Node plan is active; the account keeps its key (a new one: ${regenerate})`,
    }
  }
  return {
    accountId: out.accountId,
    keyId: out.keyId,
    planId: out.planId,
    exists: true,
    note: `the account exists (it has a key or a running plan): nothing was changed. A new key: ${regenerate}`,
  }
}
