import t from 'tap'
import { parseUnits, type Address } from 'viem'
import { startApiGateway } from '../helpers/api-gateway.js'
import { anvilAccount, chainAt, deployToken, transferToken } from '../helpers/contracts.js'

// A transfer mined before its invoice existed must not pay it: it was not made for it (another
// purpose of the treasury's address, older terms), and a wallet's old transfers would otherwise
// buy plans made later. Before, any transfer of the wallet to the treasury for enough paid any
// later invoice. A real gateway process over a real anvil whose clock starts an hour back (its
// blocks are mined an hour in the past until the test moves it to now) with a real ERC-20.

const HOUR_S = 3600
const treasury = '0x000000000000000000000000000000000000bEEF'
const alice = anvilAccount(1)
let token: Address = '0x'
const { anvil, signIn, call, freshIp } = await startApiGateway(
  t,
  async (node) => {
    token = await deployToken(chainAt(node.url), anvilAccount(0))
    await transferToken(chainAt(node.url), token, anvilAccount(0), alice.address, parseUnits('10000', 18))
    return { payments: { network: 'eth-1', token, treasury, confirmations: 1 } }
  },
  { args: ['--timestamp', String(Math.floor(Date.now() / 1000) - HOUR_S)] },
)
const chain = chainAt(anvil.url)

t.test('a transfer mined an hour before the invoice does not pay it; one mined after does', async (t) => {
  const old = await transferToken(chain, token, alice, treasury, parseUnits('5000', 18))
  const { cookie } = await signIn(alice)
  const chosen = await call(freshIp(), 'POST', '/api/plans', { planId: 'tier-1', nodes: [{ network: 'eth-1', kind: 'full' }] }, cookie)
  t.equal(chosen.status, 200, 'an invoice')
  const invoiceId = chosen.json.invoice.invoiceId
  const pay = (txHash: string) => call(freshIp(), 'POST', `/api/invoices/${invoiceId}/payment`, { txHash }, cookie)

  const early = await pay(old)
  t.equal(early.status, 409, 'refused')
  t.equal(early.json.error.code, 'MINED_BEFORE_INVOICE')
  t.match(early.json.error.message, /before the invoice existed/)
  t.equal((await call(freshIp(), 'GET', '/api/me', undefined, cookie)).json.plan, null, 'no plan')

  await anvil.rpc('evm_setNextBlockTimestamp', [Math.floor(Date.now() / 1000)])
  const fresh = await transferToken(chain, token, alice, treasury, parseUnits('5000', 18))
  const paid = await pay(fresh)
  t.equal(paid.status, 200, `paid: ${JSON.stringify(paid.json.error ?? null)}`)
  t.equal((await call(freshIp(), 'GET', '/api/me', undefined, cookie)).json.plan.id, 'tier-1')
})
