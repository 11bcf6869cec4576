import t from 'tap'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { startApiGateway } from '../helpers/api-gateway.js'
import { startGatewayProcess } from '../helpers/gateway-process.js'

// A session signed out on one instance must stop on every instance at once. Before, another
// instance kept accepting it (and showing the account's key) until its own projection had
// applied the SignedOut, however late that came. Two real gateway processes on one stream of a
// real nats-server; each round signs in on A, is seen on B, signs out on A and asks B at once. On
// this branch's base 1 round of 20 was served by B (a race with B's projection).

const ROUNDS = 40
const a = await startApiGateway(t)
const b = await startGatewayProcess(t, {
  config: {
    events: { nats: a.nats.url, stream: a.stream },
    networks: { 'eth-1': { chainId: 31337, upstreams: [{ url: a.anvil.url, kind: 'full' }] } },
  },
})
const me = async (base: string, cookie: string) => (await fetch(`${base}/api/me`, { headers: { cookie } })).status

t.test(`a session signed out on A is refused by B at once (${ROUNDS} rounds)`, async (t) => {
  const alice = privateKeyToAccount(generatePrivateKey())
  const after: number[] = []
  for (let i = 0; i < ROUNDS; i++) {
    const { status, cookie } = await a.signIn(alice)
    t.equal(status, 200)
    t.equal(await me(b.http, cookie), 200, 'B knows a session A opened (it catches up when it does not)')
    t.equal((await a.call(a.freshIp(), 'POST', '/api/siwe/logout', {}, cookie)).status, 200)
    after.push(await me(b.http, cookie))
  }
  t.same(after, Array<number>(ROUNDS).fill(401), 'B refused every signed-out session at once')
})
