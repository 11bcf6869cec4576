import t from 'tap'
import type { Hex } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { startApiGateway } from '../helpers/api-gateway.js'
import { jetStreamApiCalls, messagesDelivered } from '../../harness/nats-server.js'

// What sign-ins naming one wallet cost, from many IPs: before, sign-ins were limited per IP only
// (40 junk-signature sign-ins for one wallet from 40 addresses: 40 × 401, each an eth_getCode on
// our node and a read of the account's whole stream), the stream was read before the signature
// was checked, and every command folded the whole stream through a new consumer. New accounts
// were limited per IP only. A real gateway process on a real nats-server (whose monitoring counts
// what it delivers) and a real anvil behind a proxy that counts the calls reaching it.

const HOUR = 3_600_000
const WALLET_BURST = 10
const GLOBAL_NEW_ACCOUNTS = 3
const { nats, proxy, freshIp, call, siweMessage, signIn } = await startApiGateway(t, {
  // The refills slowed to one an hour: the counts below are exact on any machine.
  dashboard: {
    limits: {
      signIn: { perAccount: { burst: WALLET_BURST, everyMs: HOUR } },
      newAccounts: { global: { burst: GLOBAL_NEW_ACCOUNTS, everyMs: HOUR } },
    },
  },
})

const junkSignature = (i: number): Hex => `0x${(i + 1).toString(16).padStart(8, '0').repeat(16)}1b`

t.test("40 junk sign-ins naming one wallet from 40 IPs: the wallet's limit refuses past its burst; its owner still signs in", async (t) => {
  const victim = privateKeyToAccount(generatePrivateKey())
  t.equal((await signIn(victim)).status, 200, 'the account exists')
  const codes = proxy.count('eth_getCode')
  const statuses = new Map<string, number>()
  for (let i = 0; i < 40; i++) {
    const out = await call(freshIp(), 'POST', '/api/siwe/verify', { message: await siweMessage(victim.address), signature: junkSignature(i) })
    const what = `${out.status} ${out.json.error?.code}${out.status === 429 ? ` ${out.json.error.details.limit}` : ''}`
    statuses.set(what, (statuses.get(what) ?? 0) + 1)
  }
  t.same(Object.fromEntries(statuses), { '401 BAD_SIGNATURE': WALLET_BURST, '429 RATE_LIMITED signIn': 40 - WALLET_BURST })
  t.equal(proxy.count('eth_getCode') - codes, WALLET_BURST, 'the node is asked only for the attempts the limit admitted')
  t.equal((await signIn(victim)).status, 200, "the wallet's own key is checked locally: the limit never refuses it")
})

t.test("an account's commands read only what is new in its stream", async (t) => {
  const alice = privateKeyToAccount(generatePrivateKey())
  const LONG = 40
  for (let i = 0; i < LONG; i++) t.equal((await signIn(alice)).status, 200)
  // The account's stream holds 41 events now. Before, each sign-in read it whole twice (a load,
  // then the command), each time through a new consumer: 107 messages delivered and 15 JetStream
  // API calls per sign-in here. What is left is the projector's (the new events), the API's
  // replies and the gateway's background work: 14 and 9.
  const SIGN_INS = 5
  const [calls, messages] = [await jetStreamApiCalls(nats), await messagesDelivered(nats)]
  for (let i = 0; i < SIGN_INS; i++) t.equal((await signIn(alice)).status, 200)
  const callsEach = ((await jetStreamApiCalls(nats)) - calls) / SIGN_INS
  const messagesEach = ((await messagesDelivered(nats)) - messages) / SIGN_INS
  t.ok(messagesEach < LONG, `${messagesEach} messages delivered per sign-in, with ${LONG + 1} events in the account's stream`)
  t.ok(callsEach <= 11, `${callsEach} JetStream API calls per sign-in (one for the account: is anything new?)`)
})

t.test('new accounts are limited for all clients together, whatever their IPs', async (t) => {
  const statuses: string[] = []
  // The earlier subtests made 2 accounts: the global burst has room for 1 more.
  for (let i = 0; i < GLOBAL_NEW_ACCOUNTS; i++) {
    const out = await signIn(privateKeyToAccount(generatePrivateKey()))
    statuses.push(`${out.status}${out.status === 429 ? ` ${out.json.error.details.limit}` : ''}`)
  }
  t.same(statuses, ['200', '429 newAccounts', '429 newAccounts'])
  const refused = await signIn(privateKeyToAccount(generatePrivateKey()))
  t.match(refused.json.error.message, /new accounts from all clients together/)
})
