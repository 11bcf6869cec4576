import type { Entitlement } from '../events/types.js'
import type { NodeKind } from '../core/node-kind.js'
import { hostOf, type AccountCommandDeps } from './commands.js'
import { BadNodesError } from './errors.js'

/**
 * Record that the owner asks for a Private Node (PrivateNodeRequested). The operator sees it in
 * `tollgate events` and attaches a node with `tollgate nodes attach`.
 * @throws UnknownAccountError, BadNodesError
 */
export async function requestPrivateNode(
  deps: AccountCommandDeps,
  input: { accountId: string; nodes?: unknown; available: readonly Entitlement[] },
): Promise<void> {
  const nodes: Entitlement[] = []
  for (const n of Array.isArray(input.nodes) ? (input.nodes as Entitlement[]) : []) {
    if (!input.available.some((a) => a.network === n?.network && a.kind === n?.kind))
      throw new BadNodesError(`${JSON.stringify(n)} is not a node this gateway offers`)
    nodes.push({ network: n.network, kind: n.kind })
  }
  await hostOf(deps).execute(input.accountId, { type: 'RequestPrivateNode', nodes, now: deps.clock.now() })
}

/**
 * Attach a dedicated upstream node to an account (DedicatedNodeAttached), by the operator.
 * @throws UnknownAccountError
 */
export async function attachDedicatedNode(
  deps: Pick<AccountCommandDeps, 'log' | 'catalog' | 'clock' | 'projector' | 'host'>,
  input: { accountId: string; network: string; kind: NodeKind; url: string; ws: string | null },
): Promise<void> {
  await hostOf(deps).execute(input.accountId, {
    type: 'AttachDedicatedNode',
    network: input.network,
    kind: input.kind,
    url: input.url,
    ws: input.ws,
    now: deps.clock.now(),
  })
}
