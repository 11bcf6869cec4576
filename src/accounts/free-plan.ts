import { randomBytes } from 'node:crypto'
import type { Entitlement } from '../events/types.js'
import { hostOf, newKey, type AccountCommandDeps } from './commands.js'
import { UnknownPlanError, WrongPlanKindError } from './errors.js'
import { checkNodeChoice } from './plan-activation.js'

/** A plan that costs nothing and needs no operator (the Free Trial; `free` in set B). */
export function isFreePlan(plan: { priceUsdPerMonth: number | null; nodes: { rule: string } }): boolean {
  return plan.priceUsdPerMonth === null && plan.nodes.rule !== 'dedicated'
}

/**
 * Take a free plan, once per account (an account is one wallet): FreePlanClaimed, then the
 * activation (PlanActivated, NodesSelected, KeyIssued when there is no key), decided on the
 * account's own stream; two claims at once, from two instances too, are one claim.
 * @throws UnknownAccountError, UnknownPlanError, WrongPlanKindError, FreePlanUsedError
 */
export async function claimFreePlan(
  deps: AccountCommandDeps,
  input: { accountId: string; planId: string; nodes?: unknown; available: readonly Entitlement[] },
): Promise<{ apiKey: string | null }> {
  const plan = deps.catalog.get(input.planId)
  if (plan === undefined)
    throw new UnknownPlanError(
      input.planId,
      deps.catalog.plans.map((p) => p.id),
    )
  if (!isFreePlan(plan)) throw new WrongPlanKindError(`the ${plan.name} plan is not free: it is paid on chain`)
  const nodes = checkNodeChoice(plan, input.nodes, input.available)
  const key = newKey(deps)
  const attempt = randomBytes(12).toString('hex')
  const { events } = await hostOf(deps).execute(input.accountId, { type: 'ClaimFreePlan', plan, nodes, key: key.made, attempt, now: deps.clock.now() })
  return { apiKey: events.some((e) => e.type === 'KeyIssued' && e.keyId === key.made.keyId) ? key.clear : null }
}
