import { parseCommandArgs, required } from '../args.js'
import { UsageError } from '../errors.js'
import { openCommandContext } from '../context.js'
import { regenerateKey } from '../../accounts/commands.js'
import { readFileSync } from 'node:fs'
import { registerJwtKey, removeJwtKey, requireToken, restrictKey } from '../../accounts/key-settings.js'
import { KeyCipher, secretFromEnv } from '../../keys/key-cipher.js'
import { systemClock } from '../../../actors/runtime/clock.js'

const RESTRICT_USAGE =
  'tollgate keys restrict --config FILE --account ID [--methods M,...] [--deny-methods M,...] [--contracts 0x...,...] [--ips IP|CIDR,...] [--user-agent TEXT]... [--clear]'

const JWT_USAGE =
  'tollgate keys jwt add --config FILE --account ID --kid KID --alg ES256|RS256|EdDSA --public-key FILE (PEM or JWK), ' +
  'tollgate keys jwt remove --config FILE --account ID --kid KID, tollgate keys jwt require --config FILE --account ID [--off]'

/**
 * `tollgate keys regenerate --config FILE --account ID [--grace SECONDS]`
 * `tollgate keys restrict --config FILE --account ID [--methods …] [--deny-methods …] [--contracts …] [--ips …] [--user-agent …]… [--clear]`
 * `tollgate keys jwt add|remove|require …` (signed tokens, docs/keys.md)
 */
export async function keysCommand(args: string[]): Promise<void> {
  const [sub, ...rest] = args
  if (sub === 'restrict') return restrictCommand(rest)
  if (sub === 'jwt') return jwtCommand(rest)
  if (sub !== 'regenerate')
    throw new UsageError(
      `tollgate keys: unknown subcommand ${JSON.stringify(sub ?? '')}; use: tollgate keys regenerate --config FILE --account ID [--grace SECONDS], or ${RESTRICT_USAGE}, or ${JWT_USAGE}`,
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

/**
 * The public keys the account's tokens are signed with, and whether its active key needs a token.
 * Last line on stdout: JSON with the account's kids (add, remove) or the key's need (require).
 */
async function jwtCommand(args: string[]): Promise<void> {
  const [action, ...rest] = args
  if (action !== 'add' && action !== 'remove' && action !== 'require') {
    throw new UsageError(`tollgate keys jwt: unknown action ${JSON.stringify(action ?? '')}; use: ${JWT_USAGE}`)
  }
  const name = `keys jwt ${action}`
  const v = parseCommandArgs(name, rest, {
    config: { type: 'string' },
    account: { type: 'string' },
    kid: { type: 'string' },
    alg: { type: 'string' },
    'public-key': { type: 'string' },
    off: { type: 'boolean' },
  })
  const configPath = required(name, 'config', v.config)
  const accountId = required(name, 'account', v.account)
  // Read before the log is opened: a wrong path is a usage error, not a half-open command.
  const publicKey = action === 'add' ? readFileSync(required(name, 'public-key', v['public-key']), 'utf8') : undefined
  const kid = action === 'require' ? undefined : required(name, 'kid', v.kid)
  const alg = action === 'add' ? required(name, 'alg', v.alg) : undefined
  const cipher = KeyCipher.fromSecret(secretFromEnv())
  const ctx = await openCommandContext(configPath)
  try {
    const deps = { log: ctx.log, store: ctx.store, catalog: ctx.catalog, cipher, clock: systemClock, projector: ctx.projector }
    if (action === 'require') {
      const tokenRequired = await requireToken(deps, { accountId, required: v.off !== true })
      process.stdout.write(JSON.stringify({ accountId, tokenRequired }) + '\n')
      return
    }
    const keys = action === 'add' ? await registerJwtKey(deps, { accountId, kid, alg, publicKey }) : await removeJwtKey(deps, { accountId, kid: kid! })
    process.stdout.write(JSON.stringify({ accountId, jwtKeys: keys.map((k) => ({ kid: k.kid, alg: k.alg })) }) + '\n')
  } finally {
    await ctx.close()
  }
}
