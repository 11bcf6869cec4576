import type { Entitlement } from '../events/types.js'
import type { NodeKind } from '../core/node-kind.js'
import type { Plan } from './catalog.js'
import type { CoverageGap } from '../errors/problem-words.js'

/** The node kinds a key may use on one network. */
export interface Access {
  readonly full: boolean
  readonly archive: boolean
}

const NO_ACCESS: Access = Object.freeze({ full: false, archive: false })

/**
 * What an account may use on a network, from its plan's node rule and its selected nodes:
 * - `all-full` (Free Trial): every full node, no archive node;
 * - `choose` (Tiers 1 and 2): exactly the (network, kind) pairs selected;
 * - `all` (Tier 3), `dedicated` (Private Node, on the shared nodes until one is attached): all.
 * A plan with a 0 limit for a kind has no access to it. A selection given for an `all` plan
 * narrows it (an owner may restrict a key to what they use).
 */
export function accessOn(plan: Plan | undefined, nodes: readonly Entitlement[], network: string): Access {
  if (!plan) return NO_ACCESS
  const selected = (kind: NodeKind): boolean => nodes.some((n) => n.network === network && n.kind === kind)
  const allows = (kind: NodeKind): boolean => {
    if (plan.limits[kind === 'full' ? 'fullRps' : 'archiveRps'] === 0) return false
    if (kind === 'archive' && plan.nodes.rule === 'all-full') return false
    if (plan.nodes.rule === 'choose' || nodes.length > 0) return selected(kind)
    return true
  }
  return { full: allows('full'), archive: allows('archive') }
}

/**
 * Why a node selection does not fit a plan, in words for the person choosing; undefined when it
 * fits. `networks`: the networks the gateway serves.
 */
export function selectionProblem(plan: Plan, nodes: readonly Entitlement[], networks: readonly string[]): string | undefined {
  for (const n of nodes) {
    if (!networks.includes(n.network)) return `network ${JSON.stringify(n.network)} is not served here (served: ${networks.join(', ')})`
    const archive = n.kind === 'archive'
    if (archive && (plan.limits.archiveRps === 0 || plan.nodes.rule === 'all-full')) return `the ${plan.name} plan has no archive nodes`
    if (!archive && plan.limits.fullRps === 0) return `the ${plan.name} plan has no full nodes`
  }
  if (plan.nodes.rule === 'choose') {
    const count = plan.nodes.count ?? 1
    if (nodes.length === 0)
      return `the ${plan.name} plan includes ${count} node${count > 1 ? 's' : ''} of your choice: choose ${count > 1 ? `up to ${count}` : 'one'} (network and kind, e.g. ${networks[0] ?? 'eth-1'}:full)`
    if (nodes.length > count) return `the ${plan.name} plan includes ${count} node${count > 1 ? 's' : ''}; ${nodes.length} were chosen`
  }
  return undefined
}

/**
 * What the plan lacks for `network`, when accessOn gives no node kind there: the facts of the 403
 * (PLAN_DOES_NOT_COVER in src/errors/messages.ts says them).
 */
export function coverageGap(plan: Plan | undefined, nodes: readonly Entitlement[]): CoverageGap {
  if (!plan) return { gap: 'no-plan' }
  if (plan.nodes.rule === 'choose' || nodes.length > 0) {
    return nodes.length > 0 ? { gap: 'other-nodes', plan: plan.name, chosen: nodes } : { gap: 'none-chosen', plan: plan.name }
  }
  return { gap: 'network', plan: plan.name }
}
