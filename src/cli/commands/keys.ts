import { parseCommandArgs, required, UsageError } from '../args.js'
import { openCommandContext } from '../context.js'
import { regenerateKey } from '../../accounts/commands.js'
import { restrictKey } from '../../accounts/key-settings.js'
import { KeyCipher, secretFromEnv } from '../../keys/key-cipher.js'
import { systemClock } from '../../../actors/runtime/clock.js'

const RESTRICT_USAGE =
  'tollgate keys restrict --config FILE --account ID [--methods M,...] [--deny-methods M,...] [--contracts 0x...,...] [--ips IP|CIDR,...] [--user-agent TEXT]... [--clear]'

/**
 * `tollgate keys regenerate --config FILE --account ID [--grace SECONDS]`
 * `tollgate keys restrict --config FILE --account ID [--methods …] [--deny-methods …] [--contracts …] [--ips …] [--user-agent …]… [--clear]`
 */
export async function keysCommand(args: string[]): Promise<void> {
  const [sub, ...rest] = args
  if (sub === 'restrict') return restrictCommand(rest)
  if (sub !== 'regenerate')
    throw new UsageError(
      `tollgate keys: unknown subcommand ${JSON.stringify(sub ?? '')}; use: tollgate keys regenerate --config FILE --account ID [--grace SECONDS], or ${RESTRICT_USAGE}`,
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

/**
 * Set the restrictions of an account's active key. Each option given replaces that rule (an empty
 * value, `--methods ''`, lifts it); the rules not given are kept; `--clear` lifts every rule not
 * given. Lists are comma-separated or the option repeated; a user agent is one option each (it
 * may hold a comma). Last line on stdout: JSON with the key's restrictions now.
 */
async function restrictCommand(args: string[]): Promise<void> {
  const v = parseCommandArgs('keys restrict', args, {
    config: { type: 'string' },
    account: { type: 'string' },
    methods: { type: 'string', multiple: true },
    'deny-methods': { type: 'string', multiple: true },
    contracts: { type: 'string', multiple: true },
    ips: { type: 'string', multiple: true },
    'user-agent': { type: 'string', multiple: true },
    clear: { type: 'boolean' },
  })
  const configPath = required('keys restrict', 'config', v.config)
  const accountId = required('keys restrict', 'account', v.account)
  const split = (values: string[] | undefined): string[] | undefined => values?.flatMap((x) => x.split(',')).map((x) => x.trim())
  const restrictions = {
    methods: split(v.methods),
    deniedMethods: split(v['deny-methods']),
    contracts: split(v.contracts),
    ips: split(v.ips),
    userAgents: v['user-agent'],
  }
  if (Object.values(restrictions).every((x) => x === undefined) && v.clear !== true) {
    throw new UsageError(`tollgate keys restrict: give at least one rule, or --clear to lift them all; use: ${RESTRICT_USAGE}`)
  }
  const cipher = KeyCipher.fromSecret(secretFromEnv())
  const ctx = await openCommandContext(configPath)
  try {
    const now = await restrictKey(
      { log: ctx.log, store: ctx.store, catalog: ctx.catalog, cipher, clock: systemClock, projector: ctx.projector },
      { accountId, restrictions, replace: v.clear === true },
    )
    process.stdout.write(JSON.stringify({ accountId, restrictions: now }) + '\n')
  } finally {
    await ctx.close()
  }
}
