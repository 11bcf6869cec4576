import { randomBytes } from 'node:crypto'
import type { ChainRpc } from '../chain/chain-rpc.js'
import type { PaymentsConfig } from '../config/types.js'
import { makeEvent } from '../events/make-event.js'
import type { Entitlement } from '../events/types.js'
import type { Projector } from '../projections/projector.js'
import type { InvoiceRecord } from '../store/records.js'
import type { AccountCommandDeps } from '../accounts/commands.js'
import { UnknownAccountError, UnknownPlanError, WrongPlanKindError } from '../accounts/errors.js'
import { checkNodeChoice } from '../accounts/plan-activation.js'
import { PaymentError } from './payment-error.js'
import { amountFor, type TokenDecimals } from './token.js'

export interface InvoiceDeps extends AccountCommandDeps {
  projector: Projector
  payments: PaymentsConfig | undefined
  /** Our own node of payments.network. */
  rpc: ChainRpc | undefined
  decimals: TokenDecimals
}

/** An unpaid invoice this old is not offered again (a new one is made). */
const REUSE_WITHIN_MS = 24 * 3_600_000

/**
 * The invoice for a paid plan (InvoiceCreated): the price in the payment token's smallest unit,
 * its decimals read from the contract. An unpaid invoice of the same plan and nodes made in the
 * last day is returned again rather than a new one (a reload must not pile up invoices).
 * @throws PaymentError PAYMENTS_DISABLED, CHAIN_UNAVAILABLE; UnknownPlanError, WrongPlanKindError, BadNodesError
 */
export async function createInvoice(
  deps: InvoiceDeps,
  input: { accountId: string; planId: string; nodes?: unknown; available: readonly Entitlement[] },
): Promise<InvoiceRecord> {
  const plan = deps.catalog.get(input.planId)
  if (plan === undefined) throw new UnknownPlanError(input.planId, deps.catalog.plans.map((p) => p.id))
  if (plan.nodes.rule === 'dedicated') throw new WrongPlanKindError(`the ${plan.name} plan is set up by the operator: request it instead`)
  if (plan.priceUsdPerMonth === null || plan.priceUsdPerMonth === 0) throw new WrongPlanKindError(`the ${plan.name} plan is free: take it without paying`)
  if (deps.payments === undefined || deps.rpc === undefined) throw new PaymentError('PAYMENTS_DISABLED', 'paid plans are not available on this gateway (no payments configured)')
  const nodes = checkNodeChoice(plan, input.nodes, input.available)
  await deps.projector.catchUp()
  if (deps.store.account(input.accountId) === undefined) throw new UnknownAccountError(input.accountId)

  const now = deps.clock.now()
  const same = deps.store
    .invoicesOf(input.accountId)
    .find((i) => i.paid === null && i.planId === plan.id && now - i.createdAt < REUSE_WITHIN_MS && sameNodes(i.nodes, nodes) && i.token === deps.payments!.token && i.treasury === deps.payments!.treasury)
  if (same !== undefined) return same

  const decimals = await deps.decimals.get(deps.rpc, deps.payments.token)
  const invoiceId = `inv_${randomBytes(10).toString('hex')}`
  await deps.log.append([
    makeEvent(
      {
        type: 'InvoiceCreated',
        accountId: input.accountId,
        invoiceId,
        planId: plan.id,
        nodes,
        network: deps.payments.network,
        token: deps.payments.token,
        treasury: deps.payments.treasury,
        amount: amountFor(plan.priceUsdPerMonth, decimals).toString(),
        decimals,
        priceUsd: plan.priceUsdPerMonth,
      },
      now,
    ),
  ])
  await deps.projector.catchUp()
  return deps.store.invoice(invoiceId)!
}

function sameNodes(a: readonly Entitlement[], b: readonly Entitlement[]): boolean {
  const key = (list: readonly Entitlement[]) => list.map((n) => `${n.network}:${n.kind}`).sort().join(',')
  return key(a) === key(b)
}
