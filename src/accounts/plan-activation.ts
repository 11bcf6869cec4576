import type { Entitlement } from '../events/types.js'
import type { Plan } from '../plans/catalog.js'
import { BadNodesError } from './errors.js'

/**
 * The nodes a plan gets from what the user chose: with a `choose` plan, 1 to `count` distinct
 * (network, kind) pairs among those the gateway has, archive ones only when the plan allows
 * archive calls; other plans get their default (empty: all the plan allows).
 * @throws BadNodesError
 */
export function checkNodeChoice(plan: Plan, chosen: unknown, available: readonly Entitlement[]): Entitlement[] {
  if (plan.nodes.rule !== 'choose') return []
  const count = plan.nodes.count ?? 1
  if (!Array.isArray(chosen) || chosen.length === 0)
    throw new BadNodesError(`the ${plan.name} plan needs a choice of ${count === 1 ? 'one node' : `up to ${count} nodes`}`)
  const seen = new Map<string, Entitlement>()
  for (const n of chosen as Entitlement[]) {
    if (n === null || typeof n !== 'object' || !available.some((a) => a.network === n.network && a.kind === n.kind)) {
      throw new BadNodesError(`${JSON.stringify(n)} is not a node this gateway offers (${available.map((a) => `${a.network}:${a.kind}`).join(', ')})`)
    }
    if (n.kind === 'archive' && plan.limits.archiveRps === 0) throw new BadNodesError(`the ${plan.name} plan has no archive nodes`)
    seen.set(`${n.network}:${n.kind}`, { network: n.network, kind: n.kind })
  }
  if (seen.size > count) throw new BadNodesError(`the ${plan.name} plan gives ${count} node${count === 1 ? '' : 's'}, ${seen.size} were chosen`)
  return [...seen.values()]
}
