import { makeEvent } from '../events/make-event.js'
import type { Entitlement, TollgateEvent } from '../events/types.js'
import { generateApiKey } from '../keys/api-key.js'
import type { KeyCipher } from '../keys/key-cipher.js'
import type { Plan } from '../plans/catalog.js'
import type { AccountRecord } from '../store/records.js'
import { BadNodesError } from './errors.js'

/**
 * The events that activate `plan` for an account from `startsAt`:
 * PlanActivated, NodesSelected and, when the account has no active key, KeyIssued. An account
 * that has a key keeps it: a renewal or a plan change must not break the apps that use it.
 * Renewing the plan that is still running adds a period to its end (paying early loses nothing).
 */
export function activationEvents(input: {
  account: AccountRecord
  plan: Plan
  nodes: Entitlement[]
  startsAt: number
  now: number
  cipher: KeyCipher
}): { events: TollgateEvent[]; apiKey: string | null } {
  const { account, plan, startsAt, now } = input
  const current = account.plan
  const renewsFrom = current !== null && current.planId === plan.id && current.endsAt !== null && current.endsAt > startsAt ? current.endsAt : startsAt
  const events: TollgateEvent[] = [
    makeEvent({ type: 'PlanActivated', accountId: account.accountId, planId: plan.id, startsAt, endsAt: plan.periodMs === null ? null : renewsFrom + plan.periodMs }, now),
    makeEvent({ type: 'NodesSelected', accountId: account.accountId, nodes: input.nodes }, now),
  ]
  if (account.activeKeyId !== null) return { events, apiKey: null }
  const key = generateApiKey()
  events.push(makeEvent({ type: 'KeyIssued', accountId: account.accountId, keyId: key.keyId, keyHash: key.keyHash, keyCipher: input.cipher.encrypt(key.key) }, now))
  return { events, apiKey: key.key }
}

/**
 * The nodes a plan gets from what the user chose: with a `choose` plan, 1 to `count` distinct
 * (network, kind) pairs among those the gateway has, archive ones only when the plan allows
 * archive calls; other plans get their default (empty: all the plan allows).
 * @throws BadNodesError
 */
export function checkNodeChoice(plan: Plan, chosen: unknown, available: readonly Entitlement[]): Entitlement[] {
  if (plan.nodes.rule !== 'choose') return []
  const count = plan.nodes.count ?? 1
  if (!Array.isArray(chosen) || chosen.length === 0) throw new BadNodesError(`the ${plan.name} plan needs a choice of ${count === 1 ? 'one node' : `up to ${count} nodes`}`)
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
