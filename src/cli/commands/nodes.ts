import { parseCommandArgs, required } from '../args.js'
import { UsageError } from '../errors.js'
import { openCommandContext } from '../context.js'
import { attachDedicatedNode } from '../../accounts/private-node.js'
import { systemClock } from '../../../actors/runtime/clock.js'

const USAGE_LINE = 'tollgate nodes attach --config FILE --account ID --network SLUG --url http://… [--ws ws://…] [--kind full|archive]'

/**
 * `tollgate nodes attach …`: attach a dedicated upstream node to an account (a Private Node
 * request, seen as PrivateNodeRequested in `tollgate events`). Appends DedicatedNodeAttached.
 */
export async function nodesCommand(args: string[]): Promise<void> {
  const [sub, ...rest] = args
  if (sub !== 'attach') throw new UsageError(`tollgate nodes: unknown subcommand ${JSON.stringify(sub ?? '')}; use: ${USAGE_LINE}`)
  const v = parseCommandArgs('nodes attach', rest, {
    config: { type: 'string' },
    account: { type: 'string' },
    network: { type: 'string' },
    url: { type: 'string' },
    ws: { type: 'string' },
    kind: { type: 'string' },
  })
  const configPath = required('nodes attach', 'config', v.config)
  const accountId = required('nodes attach', 'account', v.account)
  const network = required('nodes attach', 'network', v.network)
  const url = required('nodes attach', 'url', v.url)
  const kind = v.kind ?? 'full'
  if (kind !== 'full' && kind !== 'archive') throw new UsageError(`tollgate nodes attach: --kind must be full or archive, got ${JSON.stringify(kind)}`)
  if (!/^https?:\/\/\S+$/.test(url) || !URL.canParse(url))
    throw new UsageError(`tollgate nodes attach: --url must be an http(s) URL, got ${JSON.stringify(url)}`)
  if (v.ws !== undefined && (!/^wss?:\/\/\S+$/.test(v.ws) || !URL.canParse(v.ws)))
    throw new UsageError(`tollgate nodes attach: --ws must be a ws(s) URL, got ${JSON.stringify(v.ws)}`)
  const ctx = await openCommandContext(configPath)
  try {
    if (!ctx.config.networks[network]) {
      throw new UsageError(
        `tollgate nodes attach: --network ${JSON.stringify(network)} is not in the config (it has ${Object.keys(ctx.config.networks).join(', ')})`,
      )
    }
    await attachDedicatedNode(
      { log: ctx.log, catalog: ctx.catalog, clock: systemClock, projector: ctx.projector },
      { accountId, network, kind, url, ws: v.ws ?? null },
    )
    process.stdout.write(JSON.stringify({ accountId, network, kind, url, ws: v.ws ?? null }) + '\n')
  } finally {
    await ctx.close()
  }
}
