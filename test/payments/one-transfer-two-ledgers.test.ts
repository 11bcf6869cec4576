import t, { type Test } from 'tap'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { parseUnits } from 'viem'
import { startAnvil } from '../../harness/anvil.js'
import { startNats } from '../../harness/nats-server.js'
import { transferToken } from '../helpers/contracts.js'
import { openLedger, type Ledger } from '../helpers/ledger.js'
import { accountFor, AVAILABLE, invoiceDeps, setUpPaymentChain } from '../helpers/payments.js'
import { EmbeddedLog } from '../../src/events/embedded-log.js'
import { JetStreamLog } from '../../src/events/jetstream-log.js'
import type { EventLog } from '../../src/events/log.js'
import { createInvoice } from '../../src/payments/invoices.js'
import { payInvoice } from '../../src/payments/pay-invoice.js'
import { PaymentError } from '../../src/accounts/errors.js'

/*
 * One transfer offered for two invoices at the same moment through two ledgers in this process
 * (each with its own LMDB projections, no lock in common) that share one event log: exactly one
 * invoice is paid, the other request is refused, and both ledgers agree which. The command path
 * (payInvoice, the account host, the log's expected version) on each log, without the gateway
 * around it; test/payments/one-transfer-two-instances.test.ts races two gateway processes.
 */
const ROUNDS = 4
const anvil = await startAnvil()
t.teardown(() => anvil.stop())
const pc = await setUpPaymentChain(t, anvil)
const nats = await startNats()
t.teardown(() => nats.stop())

async function race(t: Test, a: Ledger, b: Ledger): Promise<void> {
  const wallet = pc.wallets[0]!
  const accountId = await accountFor(a, wallet.address)
  await b.projector.catchUp()
  for (let round = 0; round < ROUNDS; round++) {
    const invoiceA = await createInvoice(invoiceDeps(a, pc), { accountId, planId: 'tier-1', nodes: AVAILABLE, available: AVAILABLE })
    const invoiceB = await createInvoice(invoiceDeps(b, pc), { accountId, planId: 'tier-3', available: AVAILABLE })
    const txHash = await transferToken(pc.chain, pc.token, wallet, pc.treasury, parseUnits('300', 18))
    const results = await Promise.allSettled([
      payInvoice(invoiceDeps(a, pc), { accountId, invoiceId: invoiceA.invoiceId, txHash }),
      payInvoice(invoiceDeps(b, pc), { accountId, invoiceId: invoiceB.invoiceId, txHash }),
    ])
    const won = results.filter((r) => r.status === 'fulfilled')
    t.equal(won.length, 1, `round ${round}: exactly one invoice is paid`)
    const lost = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')
    t.ok(lost?.reason instanceof PaymentError && lost.reason.code === 'ALREADY_USED', `round ${round}: the other is refused as already used (${lost?.reason})`)
    await a.projector.catchUp()
    await b.projector.catchUp()
    const paidIn = (l: Ledger) => [invoiceA, invoiceB].filter((i) => l.store.invoice(i.invoiceId)?.paid !== null).map((i) => i.invoiceId)
    t.equal(paidIn(a).length, 1, 'one invoice paid in the projections')
    t.same(paidIn(b), paidIn(a), 'both instances agree on who won')
    t.equal(a.store.invoice(paidIn(a)[0]!)!.paid!.txHash, txHash.toLowerCase(), 'paid by that transfer')
  }
  const stored = (await a.log.read(1, 10_000)).filter((s) => s.event.type === 'PaymentConfirmed')
  t.equal(stored.length, ROUNDS, 'the log holds one PaymentConfirmed per transfer')
}

t.test('on the embedded log', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'tollgate-shared-log-'))
  // Two handles on one LMDB log, as two processes on one machine would have.
  const logA = EmbeddedLog.open(join(dir, 'log'))
  const logB = EmbeddedLog.open(join(dir, 'log'))
  t.teardown(async () => {
    await logA.close()
    await logB.close()
    await rm(dir, { recursive: true, force: true })
  })
  await race(t, await openLedger(t, { log: logA }), await openLedger(t, { log: logB }))
})

t.test('on JetStream', async (t) => {
  const stream = `PAY${randomBytes(4).toString('hex')}`
  const connect = (): Promise<EventLog> => JetStreamLog.connect({ servers: nats.url, stream, subjectPrefix: `tg${stream.toLowerCase()}`, replicas: 1 })
  const logA = await connect()
  const logB = await connect()
  t.teardown(async () => {
    await logA.close()
    await logB.close()
  })
  await race(t, await openLedger(t, { log: logA }), await openLedger(t, { log: logB }))
})
