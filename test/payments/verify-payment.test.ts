import t, { type Test } from 'tap'
import { parseUnits } from 'viem'
import { startAnvil } from '../../harness/anvil.js'
import { transferToken } from '../helpers/contracts.js'
import { openLedger } from '../helpers/ledger.js'
import { accountFor, AVAILABLE, invoiceDeps, setUpPaymentChain } from '../helpers/payments.js'
import { createInvoice } from '../../src/payments/invoices.js'
import { payInvoice } from '../../src/payments/pay-invoice.js'
import { PaymentError } from '../../src/accounts/errors.js'
import type { ChainRpc } from '../../src/chain/chain-rpc.js'
import { FakeClock } from '../helpers/fake-clock.js'

/*
 * Payment verification against a real anvil with real OpenZeppelin ERC-20 contracts (18 decimals,
 * read from the contract): each way a transfer can fail to pay an invoice, then a good one.
 */
const anvil = await startAnvil()
t.teardown(() => anvil.stop())
const pc = await setUpPaymentChain(t, anvil)
const [alice, bob] = pc.wallets as [(typeof pc.wallets)[0], (typeof pc.wallets)[0]]
const tokens = (n: string) => parseUnits(n, 18)

async function refused(t: Test, work: Promise<unknown>, code: string): Promise<PaymentError> {
  const err = await work.then(
    () => undefined,
    (e: unknown) => e,
  )
  t.ok(err instanceof PaymentError, `refused with a PaymentError: ${(err as Error)?.message}`)
  t.equal((err as PaymentError).code, code)
  return err as PaymentError
}

t.test("an invoice is in the token's smallest unit, from the decimals the contract reports", async (t) => {
  const ledger = await openLedger(t)
  const accountId = await accountFor(ledger, alice.address)
  const invoice = await createInvoice(invoiceDeps(ledger, pc), { accountId, planId: 'tier-1', nodes: AVAILABLE, available: AVAILABLE })
  t.equal(invoice.decimals, 18)
  t.equal(invoice.amount, tokens('50').toString())
  t.equal(invoice.token, pc.token.toLowerCase())
  t.same(invoice.nodes, AVAILABLE)
  const again = await createInvoice(invoiceDeps(ledger, pc), { accountId, planId: 'tier-1', nodes: AVAILABLE, available: AVAILABLE })
  t.equal(again.invoiceId, invoice.invoiceId, 'the same unpaid invoice is offered again')
})

t.test('transfers that do not pay: too small, wrong token, wrong recipient, wrong sender, no transfer', async (t) => {
  const ledger = await openLedger(t)
  const deps = invoiceDeps(ledger, pc)
  const accountId = await accountFor(ledger, alice.address)
  const { invoiceId } = await createInvoice(deps, { accountId, planId: 'tier-1', nodes: AVAILABLE, available: AVAILABLE })
  const pay = (txHash: string) => payInvoice(deps, { accountId, invoiceId, txHash })

  const small = await refused(t, pay(await transferToken(pc.chain, pc.token, alice, pc.treasury, tokens('49.99'))), 'TOO_SMALL')
  t.same(small.details, { paid: '49.99', due: '50' })
  await refused(t, pay(await transferToken(pc.chain, pc.otherToken, alice, pc.treasury, tokens('50'))), 'WRONG_TOKEN')
  await refused(t, pay(await transferToken(pc.chain, pc.token, alice, bob.address, tokens('50'))), 'WRONG_RECIPIENT')
  await refused(t, pay(await transferToken(pc.chain, pc.token, bob, pc.treasury, tokens('50'))), 'WRONG_SENDER')
  await refused(t, pay(await pc.chain.send(alice, { to: pc.treasury, data: '0x' })), 'NO_TRANSFER')
  await refused(t, pay('0x' + '00'.repeat(32)), 'NOT_FOUND')
  await refused(t, pay('0x1234'), 'BAD_TX_HASH')
  t.equal(ledger.store.invoice(invoiceId)?.paid, null, 'the invoice is still unpaid')
  t.equal(ledger.store.account(accountId)?.plan, null, 'and no plan is active')
})

t.test('a good transfer pays the invoice, activates the plan and issues a key', async (t) => {
  const ledger = await openLedger(t)
  const deps = invoiceDeps(ledger, pc)
  const accountId = await accountFor(ledger, alice.address)
  const invoice = await createInvoice(deps, { accountId, planId: 'tier-1', nodes: AVAILABLE, available: AVAILABLE })
  const txHash = await transferToken(pc.chain, pc.token, alice, pc.treasury, tokens('50'))
  const { invoice: paid, apiKey } = await payInvoice(deps, { accountId, invoiceId: invoice.invoiceId, txHash })
  t.equal(paid.paid?.txHash, txHash.toLowerCase())
  t.equal(paid.activated, true)
  t.match(apiKey, /^tg_/)
  const account = ledger.store.account(accountId)!
  t.equal(account.plan?.planId, 'tier-1')
  t.equal(account.plan!.endsAt! - account.plan!.startsAt, 30 * 86_400_000, 'a month')
  t.same(account.nodes, AVAILABLE, 'the chosen node')
  t.ok(account.activeKeyId)

  const again = await payInvoice(deps, { accountId, invoiceId: invoice.invoiceId, txHash })
  t.equal(again.apiKey, null, 'offering the same payment again changes nothing')
  t.equal(ledger.store.account(accountId)!.activeKeyId, account.activeKeyId, 'and issues no second key')

  // Renewal: another payment adds a month to the running period, the key stays.
  const renewal = await createInvoice(deps, { accountId, planId: 'tier-1', nodes: AVAILABLE, available: AVAILABLE })
  await payInvoice(deps, { accountId, invoiceId: renewal.invoiceId, txHash: await transferToken(pc.chain, pc.token, alice, pc.treasury, tokens('50')) })
  const renewed = ledger.store.account(accountId)!
  t.equal(renewed.plan!.endsAt, account.plan!.endsAt! + 30 * 86_400_000, 'the period is extended from its end')
  t.equal(renewed.activeKeyId, account.activeKeyId, 'the key is kept')
})

t.test('one transfer pays one invoice only', async (t) => {
  const ledger = await openLedger(t)
  const deps = invoiceDeps(ledger, pc)
  const accountId = await accountFor(ledger, alice.address)
  const first = await createInvoice(deps, { accountId, planId: 'tier-1', nodes: AVAILABLE, available: AVAILABLE })
  const second = await createInvoice(deps, { accountId, planId: 'tier-3', available: AVAILABLE })
  const txHash = await transferToken(pc.chain, pc.token, alice, pc.treasury, tokens('300'))
  await payInvoice(deps, { accountId, invoiceId: first.invoiceId, txHash })
  await refused(t, payInvoice(deps, { accountId, invoiceId: second.invoiceId, txHash }), 'ALREADY_USED')
  t.equal(ledger.store.invoice(second.invoiceId)?.paid, null)
  t.equal(ledger.store.account(accountId)?.plan?.planId, 'tier-1')
})

t.test('a payment counts only after the configured confirmations', async (t) => {
  const ledger = await openLedger(t)
  const deps = invoiceDeps(ledger, pc, 3)
  const accountId = await accountFor(ledger, bob.address)
  const { invoiceId } = await createInvoice(deps, { accountId, planId: 'tier-1', nodes: AVAILABLE, available: AVAILABLE })
  const txHash = await transferToken(pc.chain, pc.token, bob, pc.treasury, tokens('50'))
  const waiting = await refused(t, payInvoice(deps, { accountId, invoiceId, txHash }), 'UNCONFIRMED')
  t.same(waiting.details, { have: 1, need: 3 })
  t.equal(waiting.pending, true, 'not final: the dashboard asks again')
  await anvil.rpc('anvil_mine', ['0x2'])
  const { invoice } = await payInvoice(deps, { accountId, invoiceId, txHash })
  t.equal(invoice.activated, true)
})

t.test('a payment removed by a reorg does not pay', async (t) => {
  const ledger = await openLedger(t)
  const deps = invoiceDeps(ledger, pc, 3)
  const accountId = await accountFor(ledger, alice.address)
  const { invoiceId } = await createInvoice(deps, { accountId, planId: 'tier-1', nodes: AVAILABLE, available: AVAILABLE })
  const txHash = await transferToken(pc.chain, pc.token, alice, pc.treasury, tokens('50'))
  await refused(t, payInvoice(deps, { accountId, invoiceId, txHash }), 'UNCONFIRMED')
  // Replace the last blocks (the payment's included) with empty ones: the transfer is gone.
  await anvil.rpc('anvil_mine', ['0x1'])
  t.same((await anvil.rpc('anvil_reorg', [2, []])).error, undefined)
  await anvil.rpc('anvil_mine', ['0x3'])
  await refused(t, payInvoice(deps, { accountId, invoiceId, txHash }), 'NOT_FOUND')
  t.equal(ledger.store.invoice(invoiceId)?.paid, null)
})

t.test('a receipt whose block is no longer canonical does not pay', async (t) => {
  const ledger = await openLedger(t)
  // The chain reorganises right after the node served the receipt: what a lagging or
  // load-balanced node can show. The receipt then names a block that is not the chain's.
  let reorgAfterReceipt = true
  const racing: ChainRpc = {
    network: pc.rpc.network,
    async request<T>(method: string, params: unknown[]): Promise<T> {
      const result = await pc.rpc.request<T>(method, params)
      if (method === 'eth_getTransactionReceipt' && reorgAfterReceipt) {
        reorgAfterReceipt = false
        await anvil.rpc('anvil_reorg', [1, []])
      }
      return result
    },
  }
  const deps = invoiceDeps(ledger, pc, 1, racing)
  const accountId = await accountFor(ledger, alice.address)
  const { invoiceId } = await createInvoice(deps, { accountId, planId: 'tier-1', nodes: AVAILABLE, available: AVAILABLE })
  const txHash = await transferToken(pc.chain, pc.token, alice, pc.treasury, tokens('50'))
  await refused(t, payInvoice(deps, { accountId, invoiceId, txHash }), 'REORGED')
  t.equal(ledger.store.invoice(invoiceId)?.paid, null)
})

t.test('invoice expiry: the block time decides; a late transfer is recorded and pays a fresh invoice', async (t) => {
  // The gateway's clock starts at the chain's; anvil's next block time is set, so "mined before"
  // and "mined after" the invoice's expiry are facts of the chain, not races with the real clock.
  const TTL = 30 * 60_000
  const latest = await anvil.rpc('eth_getBlockByNumber', ['latest', false])
  const chainNow = Number(BigInt((latest.result as { timestamp: string }).timestamp)) * 1000
  const clock = new FakeClock(chainNow)
  const ledger = await openLedger(t, { clock })
  const deps = { ...invoiceDeps(ledger, pc), payments: pc.payments(1, TTL) }
  const carol = pc.wallets[2]!
  const accountId = await accountFor(ledger, carol.address)
  const create = (planId: string) => createInvoice(deps, { accountId, planId, nodes: planId === 'tier-1' ? AVAILABLE : undefined, available: AVAILABLE })
  const mineAt = (ms: number) => anvil.rpc('evm_setNextBlockTimestamp', [Math.floor(ms / 1000)])

  const first = await create('tier-1')
  t.equal(first.expiresAt, chainNow + TTL, 'the invoice holds for payments.invoiceTtlMs')
  await mineAt(chainNow + 60_000)
  const inTime = await transferToken(pc.chain, pc.token, carol, pc.treasury, tokens('50'))
  clock.advance(2 * TTL)
  const { invoice: paid } = await payInvoice(deps, { accountId, invoiceId: first.invoiceId, txHash: inTime })
  t.equal(paid.activated, true, 'mined within the TTL, checked an hour after it: it pays')

  const second = await create('tier-3')
  t.not(second.invoiceId, first.invoiceId)
  await mineAt(second.expiresAt! + 60_000)
  const late = await transferToken(pc.chain, pc.token, carol, pc.treasury, tokens('300'))
  clock.set(second.expiresAt! + 90_000)
  const err = await refused(t, payInvoice(deps, { accountId, invoiceId: second.invoiceId, txHash: late }), 'INVOICE_EXPIRED')
  t.match(err.message, /expired at .* the same transaction/)
  t.same(err.details, { expiredAt: second.expiresAt, minedAt: second.expiresAt! + 60_000, txHash: late.toLowerCase() })
  await refused(t, payInvoice(deps, { accountId, invoiceId: second.invoiceId, txHash: late }), 'INVOICE_EXPIRED')
  const { events } = await ledger.log.readAccount(accountId)
  const unmatched = events.map((s) => s.event).filter((e) => e.type === 'PaymentUnmatched')
  t.equal(unmatched.length, 1, 'recorded once in the log (operators see it with `tollgate events`)')
  t.match(unmatched[0], { invoiceId: second.invoiceId, txHash: late.toLowerCase(), amount: tokens('300').toString(), invoiceExpiresAt: second.expiresAt })
  const record = ledger.store.invoice(second.invoiceId)!
  t.equal(record.paid, null)
  t.match(record.latePayments, [{ txHash: late.toLowerCase(), amount: tokens('300').toString(), minedAt: second.expiresAt! + 60_000 }], 'the invoice shows it')

  const third = await create('tier-3')
  t.not(third.invoiceId, second.invoiceId, 'an expired invoice is not offered again')
  const { invoice: carried } = await payInvoice(deps, { accountId, invoiceId: third.invoiceId, txHash: late })
  t.equal(carried.activated, true, 'the late transfer pays the fresh invoice: nothing is paid twice')
  t.equal(ledger.store.account(accountId)?.plan?.planId, 'tier-3')
})
