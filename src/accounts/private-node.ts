import { makeEvent } from '../events/make-event.js'
import type { Entitlement, NodeKind } from '../events/types.js'
import type { Projector } from '../projections/projector.js'
import type { AccountCommandDeps } from './commands.js'
import { BadNodesError, UnknownAccountError } from './errors.js'

/**
 * Record that the owner asks for a Private Node (PrivateNodeRequested). The operator sees it in
 * `tollgate events` and attaches a node with `tollgate nodes attach`.
 * @throws UnknownAccountError, BadNodesError
 */
export async function requestPrivateNode(
  deps: AccountCommandDeps & { projector: Projector },
  input: { accountId: string; nodes?: unknown; available: readonly Entitlement[] },
): Promise<void> {
  const nodes: Entitlement[] = []
  for (const n of Array.isArray(input.nodes) ? (input.nodes as Entitlement[]) : []) {
    if (!input.available.some((a) => a.network === n?.network && a.kind === n?.kind)) throw new BadNodesError(`${JSON.stringify(n)} is not a node this gateway offers`)
    nodes.push({ network: n.network, kind: n.kind })
  }
  await deps.projector.catchUp()
  if (deps.store.account(input.accountId) === undefined) throw new UnknownAccountError(input.accountId)
  await deps.log.append([makeEvent({ type: 'PrivateNodeRequested', accountId: input.accountId, nodes }, deps.clock.now())])
  await deps.projector.catchUp()
}

/**
 * Attach a dedicated upstream node to an account (DedicatedNodeAttached), by the operator.
 * @throws UnknownAccountError
 */
export async function attachDedicatedNode(
  deps: Pick<AccountCommandDeps, 'log' | 'store' | 'clock'> & { projector: Projector },
  input: { accountId: string; network: string; kind: NodeKind; url: string; ws: string | null },
): Promise<void> {
  await deps.projector.catchUp()
  if (deps.store.account(input.accountId) === undefined) throw new UnknownAccountError(input.accountId)
  await deps.log.append([makeEvent({ type: 'DedicatedNodeAttached', ...input }, deps.clock.now())])
  await deps.projector.catchUp()
}
