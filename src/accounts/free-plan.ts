import { randomBytes } from 'node:crypto'
import { makeEvent } from '../events/make-event.js'
import type { Entitlement } from '../events/types.js'
import { claimKeys } from '../projections/billing-projection.js'
import type { Projector } from '../projections/projector.js'
import type { AccountCommandDeps } from './commands.js'
import { FreePlanUsedError, UnknownAccountError, UnknownPlanError, WrongPlanKindError } from './errors.js'
import { activationEvents, checkNodeChoice } from './plan-activation.js'

/** A plan that costs nothing and needs no operator (the Free Trial; `free` in set B). */
export function isFreePlan(plan: { priceUsdPerMonth: number | null; nodes: { rule: string } }): boolean {
  return plan.priceUsdPerMonth === null && plan.nodes.rule !== 'dedicated'
}

/**
 * Take a free plan, once per account (an account is one wallet). Appends FreePlanClaimed; the
 * first claim in the log wins, even when two requests (or two instances) claim at once, and only
 * the winner appends the activation (PlanActivated, NodesSelected, KeyIssued when no key).
 * @throws UnknownAccountError, UnknownPlanError, WrongPlanKindError, FreePlanUsedError
 */
export async function claimFreePlan(
  deps: AccountCommandDeps & { projector: Projector },
  input: { accountId: string; planId: string; nodes?: unknown; available: readonly Entitlement[] },
): Promise<{ apiKey: string | null }> {
  const plan = deps.catalog.get(input.planId)
  if (plan === undefined) throw new UnknownPlanError(input.planId, deps.catalog.plans.map((p) => p.id))
  if (!isFreePlan(plan)) throw new WrongPlanKindError(`the ${plan.name} plan is not free: it is paid on chain`)
  const nodes = checkNodeChoice(plan, input.nodes, input.available)
  await deps.projector.catchUp()
  if (deps.store.account(input.accountId) === undefined) throw new UnknownAccountError(input.accountId)
  const key = claimKeys.freePlan(input.accountId, plan.id)
  if (deps.store.claim(key) !== undefined) throw new FreePlanUsedError(plan.name)

  const now = deps.clock.now()
  const attempt = randomBytes(12).toString('hex')
  await deps.log.append([makeEvent({ type: 'FreePlanClaimed', accountId: input.accountId, planId: plan.id, attempt }, now)])
  await deps.projector.catchUp()
  if (deps.store.claim(key)?.by !== attempt) throw new FreePlanUsedError(plan.name)

  const account = deps.store.account(input.accountId)!
  const { events, apiKey } = activationEvents({ account, plan, nodes, startsAt: now, now, cipher: deps.cipher })
  await deps.log.append(events)
  await deps.projector.catchUp()
  return { apiKey }
}
