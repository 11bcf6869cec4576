/**
 * Accounts with keys on the event log of a gateway's config, made by what `tollgate accounts
 * create --config FILE --wallet … --plan …` runs (the same context and `openAccount`, from the built
 * tree's dist/), in one process for all of them: the command line, once an account, took about a
 * second of CPU each (the compiled tree loaded and NATS connected every time), and a run of
 * bench/fleet-outside.ts needs 1,400 of them.
 *
 * Run: `node --import tsx bench/targets/fleet-accounts.ts '{"dist":"…/dist","config":"…/config.json","accounts":200,"plan":"bench"}'`
 * with TOLLGATE_SECRET set as the gateways have it; prints one JSON line `{"apiKeys":[…]}`.
 */
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

const opts = JSON.parse(process.argv[2] ?? '{}') as { dist: string; config: string; accounts: number; plan: string }
const load = <T>(path: string): Promise<T> => import(pathToFileURL(join(opts.dist, path)).href) as Promise<T>

const [{ openCommandContext }, { openAccount }, { KeyCipher, secretFromEnv }, { systemClock }] = await Promise.all([
  load<typeof import('../../src/cli/context.js')>('src/cli/context.js'),
  load<typeof import('../../src/accounts/commands.js')>('src/accounts/commands.js'),
  load<typeof import('../../src/keys/key-cipher.js')>('src/keys/key-cipher.js'),
  load<typeof import('../../actors/runtime/clock.js')>('actors/runtime/clock.js'),
])

const cipher = KeyCipher.fromSecret(secretFromEnv())
const ctx = await openCommandContext(opts.config)
const apiKeys: string[] = []
try {
  for (let i = 0; i < opts.accounts; i++) {
    const out = await openAccount(
      { log: ctx.log, store: ctx.store, catalog: ctx.catalog, cipher, clock: systemClock, projector: ctx.projector },
      { wallet: `0x${randomBytes(20).toString('hex')}`, planId: opts.plan, networks: Object.keys(ctx.config.networks) },
    )
    if (out.apiKey === undefined) throw new Error(`account ${out.accountId}: no new key (${out.outcome})`)
    apiKeys.push(out.apiKey)
  }
} finally {
  await ctx.close()
}
process.stdout.write(`${JSON.stringify({ apiKeys })}\n`)
process.exit(0)
