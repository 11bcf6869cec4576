import { randomBytes } from 'node:crypto'
import type { ChainRpc } from '../chain/chain-rpc.js'
import type { PaymentsConfig } from '../config/types.js'
import type { Entitlement } from '../events/types.js'
import type { InvoiceRecord } from '../store/records.js'
import { hostOf, type AccountCommandDeps } from '../accounts/commands.js'
import type { NewInvoice } from '../accounts/decide.js'
import type { InvoiceState } from '../accounts/account-state.js'
import { UnknownAccountError, UnknownPlanError, WrongPlanKindError } from '../accounts/errors.js'
import { checkNodeChoice } from '../accounts/plan-activation.js'
import { PaymentError } from '../accounts/errors.js'
import { amountFor, type TokenDecimals } from './token.js'

export interface InvoiceDeps extends AccountCommandDeps {
  payments: PaymentsConfig | undefined
  /** Our own node of payments.network. */
  rpc: ChainRpc | undefined
  decimals: TokenDecimals
}

/**
 * The invoice for a paid plan (InvoiceCreated): the price in the payment token's smallest unit,
 * its decimals read from the contract, valid for `payments.invoiceTtlMs` (the terms of the day:
 * the price, the token or the treasury may change later). An unpaid invoice of the same plan and
 * nodes with at least half of that left is returned again rather than a new one (a reload must
 * not pile up invoices, and a wallet must have time to pay what it is shown).
 * @throws PaymentError PAYMENTS_DISABLED, CHAIN_UNAVAILABLE; UnknownPlanError, WrongPlanKindError, BadNodesError
 */
export async function createInvoice(
  deps: InvoiceDeps,
  input: { accountId: string; planId: string; nodes?: unknown; available: readonly Entitlement[] },
): Promise<InvoiceRecord> {
  const plan = deps.catalog.get(input.planId)
  if (plan === undefined)
    throw new UnknownPlanError(
      input.planId,
      deps.catalog.plans.map((p) => p.id),
    )
  if (plan.nodes.rule === 'dedicated') throw new WrongPlanKindError(`the ${plan.name} plan is set up by the operator: request it instead`)
  if (plan.priceUsdPerMonth === null || plan.priceUsdPerMonth === 0) throw new WrongPlanKindError(`the ${plan.name} plan is free: take it without paying`)
  if (deps.payments === undefined || deps.rpc === undefined)
    throw new PaymentError('PAYMENTS_DISABLED', 'paid plans are not available on this gateway (no payments configured)')
  const nodes = checkNodeChoice(plan, input.nodes, input.available)
  const host = hostOf(deps)
  const account = await host.load(input.accountId)
  if (!account.exists) throw new UnknownAccountError(input.accountId)

  const now = deps.clock.now()
  const payments = deps.payments
  const same = [...account.invoices.values()].find(
    (i) =>
      i.paid === null &&
      i.planId === plan.id &&
      i.expiresAt !== null &&
      i.expiresAt - now >= payments.invoiceTtlMs / 2 &&
      sameNodes(i.nodes, nodes) &&
      i.token === payments.token &&
      i.treasury === payments.treasury,
  )
  if (same !== undefined) return invoiceRecord(input.accountId, same, plan.priceUsdPerMonth)

  const decimals = await deps.decimals.get(deps.rpc, payments.token)
  const invoice: NewInvoice = {
    invoiceId: `inv_${randomBytes(10).toString('hex')}`,
    planId: plan.id,
    nodes,
    network: payments.network,
    token: payments.token,
    treasury: payments.treasury,
    amount: amountFor(plan.priceUsdPerMonth, decimals).toString(),
    decimals,
    priceUsd: plan.priceUsdPerMonth,
    expiresAt: now + payments.invoiceTtlMs,
  }
  const { state } = await host.execute(input.accountId, { type: 'CreateInvoice', invoice, now })
  return invoiceRecord(input.accountId, state.invoices.get(invoice.invoiceId)!, plan.priceUsdPerMonth)
}

/** The invoice as the read model shows it, from the account's state (the caller needs no catch-up). */
export function invoiceRecord(accountId: string, i: InvoiceState, priceUsd: number): InvoiceRecord {
  return {
    invoiceId: i.invoiceId,
    accountId,
    planId: i.planId,
    nodes: i.nodes,
    network: i.network,
    token: i.token,
    treasury: i.treasury,
    amount: i.amount,
    decimals: i.decimals,
    priceUsd,
    createdAt: i.createdAt,
    ...(i.expiresAt === null ? {} : { expiresAt: i.expiresAt }),
    paid: i.paid,
    activated: i.activated,
  }
}

function sameNodes(a: readonly Entitlement[], b: readonly Entitlement[]): boolean {
  const key = (list: readonly Entitlement[]) =>
    list
      .map((n) => `${n.network}:${n.kind}`)
      .sort()
      .join(',')
  return key(a) === key(b)
}
