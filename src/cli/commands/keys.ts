import { parseCommandArgs, required, UsageError } from '../args.js'
import { openCommandContext } from '../context.js'
import { regenerateKey } from '../../accounts/commands.js'
import { KeyCipher, secretFromEnv } from '../../keys/key-cipher.js'
import { systemClock } from '../../../actors/runtime/clock.js'

/** `tollgate keys regenerate --config FILE --account ID [--grace SECONDS]` */
export async function keysCommand(args: string[]): Promise<void> {
  const [sub, ...rest] = args
  if (sub !== 'regenerate')
    throw new UsageError(
      `tollgate keys: unknown subcommand ${JSON.stringify(sub ?? '')}; use: tollgate keys regenerate --config FILE --account ID [--grace SECONDS]`,
    )
  const v = parseCommandArgs('keys regenerate', rest, {
    config: { type: 'string' },
    account: { type: 'string' },
    grace: { type: 'string' },
  })
  const configPath = required('keys regenerate', 'config', v.config)
  const accountId = required('keys regenerate', 'account', v.account)
  const graceS = v.grace === undefined ? 0 : Number(v.grace)
  if (!Number.isFinite(graceS) || graceS < 0)
    throw new UsageError(`tollgate keys regenerate: --grace must be a number of seconds >= 0, got ${JSON.stringify(v.grace)}`)
  const cipher = KeyCipher.fromSecret(secretFromEnv())
  const ctx = await openCommandContext(configPath)
  try {
    const out = await regenerateKey(
      { log: ctx.log, store: ctx.store, catalog: ctx.catalog, cipher, clock: systemClock, projector: ctx.projector },
      { accountId, graceMs: graceS * 1000 },
    )
    process.stdout.write(JSON.stringify({ accountId, keyId: out.keyId, apiKey: out.apiKey }) + '\n')
  } finally {
    await ctx.close()
  }
}
