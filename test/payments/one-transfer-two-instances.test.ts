import t from 'tap'
import { parseUnits } from 'viem'
import { startAnvil } from '../../harness/anvil.js'
import { runCli } from '../helpers/cli.js'
import { anvilAccount, chainAt, deployToken, transferToken } from '../helpers/contracts.js'
import { startCountingProxy } from '../helpers/counting-proxy.js'
import { DashboardClient } from '../helpers/dashboard-client.js'
import { waitFor } from '../helpers/eventually.js'
import { startFleet } from '../helpers/fleet.js'
import { TEST_SECRET } from '../helpers/gateway.js'
import { startNats } from '../../harness/nats-server.js'

/*
 * One transfer offered for two invoices at the same moment on two gateway instances: two
 * `tollgate start` processes, each with its own LMDB projections, sharing one stream on a real
 * nats-server, each asked through its own dashboard API by the account's owner. Exactly one
 * invoice is paid, the other request is refused as already used, both instances come to show the
 * same winner, and the log holds one PaymentConfirmed per transfer.
 *
 * The node (a real anvil) is behind a proxy that holds each instance's last check of the transfer
 * (the block of its receipt) until both have come that far, then lets both go at once: neither
 * has appended anything yet, so both decide on the same version of the account and race for the
 * append (without the hold, one instance mostly finished before the other began). Several rounds.
 */
// Two gateway processes and a command-line run: 50 s on a quiet machine, minutes on a loaded one.
t.setTimeout(600_000)
const ROUNDS = 4
const NODES = [{ network: 'eth-1', kind: 'full' }]
const anvil = await startAnvil({ chainId: 31337 })
t.teardown(() => anvil.stop())
const nats = await startNats()
t.teardown(() => nats.stop())
const chain = chainAt(anvil.url)
const token = await deployToken(chain, anvilAccount(0))
const treasury = '0x000000000000000000000000000000000000bEEF'
const alice = anvilAccount(1)
await transferToken(chain, token, anvilAccount(0), alice.address, parseUnits('20000', 18))

const proxy = await startCountingProxy(anvil)
t.teardown(() => proxy.close())

const { gateways } = await startFleet(t, {
  instances: 2,
  natsUrl: nats.url,
  nodeUrl: proxy.url,
  config: { payments: { network: 'eth-1', token, treasury, confirmations: 1 } },
})
const clients = gateways.map((gw) => new DashboardClient(gw.http))

/** The status of each of `invoiceIds` as the instance of `client` shows it. */
async function statuses(client: DashboardClient, invoiceIds: string[]): Promise<string[]> {
  const me = await client.get('/api/me')
  if (me.status !== 200) throw new Error(`/api/me: ${me.status} ${JSON.stringify(me.json)}`)
  return invoiceIds.map((id) => me.json.invoices.find((i: { invoiceId: string }) => i.invoiceId === id)?.status ?? 'missing')
}

t.test('the owner signs in on each instance: one account', async (t) => {
  const ids = []
  for (const c of clients) {
    const out = await c.signIn(alice, 31337)
    t.equal(out.status, 200, JSON.stringify(out.json))
    ids.push(out.json.accountId)
  }
  t.equal(ids[1], ids[0])
})

t.test(`one transfer for two invoices on two instances at once, ${ROUNDS} rounds: one is paid, both instances agree`, async (t) => {
  const [a, b] = clients as [DashboardClient, DashboardClient]
  const paid: string[] = []
  for (let round = 0; round < ROUNDS; round++) {
    const chosenA = await a.post('/api/plans', { planId: 'tier-1', nodes: NODES })
    const chosenB = await b.post('/api/plans', { planId: 'tier-3', nodes: NODES })
    t.equal(chosenA.status, 200, JSON.stringify(chosenA.json))
    t.equal(chosenB.status, 200, JSON.stringify(chosenB.json))
    const invoices = [chosenA.json.invoice.invoiceId as string, chosenB.json.invoice.invoiceId as string]
    // Enough for either invoice (tier-1 is 50, tier-3 300).
    const txHash = await transferToken(chain, token, alice, treasury, parseUnits('300', 18))
    const blockOfReceipt = proxy.hold((c) => c.method === 'eth_getBlockByNumber' && Array.isArray(c.params) && /^0x/.test(String(c.params[0])))
    const paying = Promise.all([a.post(`/api/invoices/${invoices[0]}/payment`, { txHash }), b.post(`/api/invoices/${invoices[1]}/payment`, { txHash })])
    await waitFor(() => blockOfReceipt.count >= 2, `round ${round}: both instances to check the transfer on the node`)
    blockOfReceipt.release()
    const answers = await paying
    const what = answers.map((r) => `${r.status} ${r.json.error?.code ?? r.json.invoice?.status}`)
    t.same([...what].sort(), ['200 active', '409 ALREADY_USED'], `round ${round}: one paid, the other refused as already used (A: ${what[0]}, B: ${what[1]})`)
    const winner = answers.findIndex((r) => r.status === 200)
    paid.push(winner === 0 ? 'A' : 'B')
    const expected = winner === 0 ? ['active', 'unpaid'] : ['unpaid', 'active']
    // Each instance shows what its own projection of the log holds: wait until both show a
    // winner, then they must show the same one.
    await waitFor(async () => {
      for (const c of clients) if (!(await statuses(c, invoices)).includes('active')) return false
      return true
    }, `round ${round}: both instances to project the payment`)
    t.same(await statuses(a, invoices), expected, `round ${round}: instance A shows the winner`)
    t.same(await statuses(b, invoices), expected, `round ${round}: instance B shows the same`)
  }
  t.comment(`the instance that won each round: ${paid.join(', ')}`)
  // 3 minutes, not runCli's 30 s: loading the gateway is slow on a loaded machine.
  const events = await runCli(['events', '--config', gateways[0]!.configPath], { TOLLGATE_SECRET: TEST_SECRET }, 180_000)
  t.equal(events.code, 0, events.stderr)
  const confirmed = events.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l))
    .filter((e) => e.type === 'PaymentConfirmed')
  t.equal(confirmed.length, ROUNDS, 'the log holds one PaymentConfirmed per transfer')
  t.equal(new Set(confirmed.map((e) => e.txHash)).size, ROUNDS, 'each for a transfer of its own')
})
