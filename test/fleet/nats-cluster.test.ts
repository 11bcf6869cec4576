import t from 'tap'
import { startAnvil } from '../../harness/anvil.js'
import { startNatsCluster } from '../helpers/nats-cluster.js'
import { within } from '../helpers/cli.js'
import { rpc } from '../helpers/gateway.js'
import { createAccountKey, eventsOf, metricValue, startFleet } from '../helpers/fleet.js'
import { CallLoop } from '../helpers/call-loop.js'

// Two gateways on a 3-node NATS cluster, the stream at 3 replicas, clients calling both without
// pause. One NATS node is SIGKILLed: no call fails and the other two keep taking the usage. Two
// are: calls are still served and usage waits in the outboxes (no quorum); once they are back it
// is delivered, and the usage events in the stream add up to the calls served, exactly, each event
// stored once.
//
// The waits are on the cluster itself (a stream leader, a node caught up, the outboxes empty), not
// on a number of calls: after a SIGKILL the remaining nodes take 2 to 5 s to elect a stream leader,
// and two nodes restarted together 3 to 7 s to form a quorum again (routes, then the meta leader,
// then the stream's); the clients make 400 calls in half a second.

const anvil = await startAnvil()
t.teardown(() => anvil.stop())
const cluster = await startNatsCluster(3)
t.teardown(() => cluster.stop())
const { gateways, stream } = await startFleet(t, {
  instances: 2,
  natsUrl: cluster.urls,
  nodeUrl: anvil.url,
  events: { replicas: 3 },
  config: { usage: { intervalMs: 200 }, shutdownMs: 5_000 },
})

/** Sum of UsageRecorded.requests of `keyId` in the stream (read by the command line); throws on an event stored twice. */
async function usageOf(keyId: string): Promise<number> {
  // The command can find the cluster still electing a stream leader after the restarts (it then
  // exits with an error and prints nothing, seen on a slow machine; four tries a second apart were
  // once too few): asked again until it answers, 60 s at most (an outer bound).
  const events = await eventsOf(gateways[0]!.configPath, 60_000)
  const ids = new Set<string>()
  let sum = 0
  for (const e of events) {
    if (e.type !== 'UsageRecorded') continue
    if (ids.has(e.id)) throw new Error(`event ${e.id} stored twice`)
    ids.add(e.id)
    if (e.keyId === keyId) sum += e.requests
  }
  return sum
}

/** Events waiting in the outboxes of both gateways. */
async function pending(): Promise<number> {
  let sum = 0
  for (const gw of gateways) sum += (await metricValue(gw, 'tollgate_outbox_pending_events')) ?? 0
  return sum
}

/**
 * An account and its key, made by the command line. A stream of 3 replicas just created may still
 * be electing its leader (the command then fails with "stream … is not available", seen once in a
 * full run): asked again, as an operator would, at most 4 times.
 */
async function createKey(): Promise<{ apiKey: string; keyId: string }> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await createAccountKey(gateways[0]!, 'tier-3')
    } catch (err) {
      if (attempt >= 4 || !/is not available/.test((err as Error).message)) throw err
      await new Promise((r) => setTimeout(r, 1_000))
    }
  }
}

t.test('NATS nodes killed under load: no call fails, usage is delivered once when a quorum is back', async (t) => {
  // The command prints the key's id: the usage events below are counted by it.
  const { apiKey, keyId } = await createKey()
  // Each gateway serves the key once before the clients start: those calls are usage too.
  let probes = 0
  for (const gw of gateways) {
    const served = await within(20_000, async () => {
      const ok = (await rpc(`${gw.url('eth-1')}?apikey=${apiKey}`, { jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] })).status === 200
      if (ok) probes++
      return ok
    })
    t.not(served, undefined, `${gw.http} serves the key`)
  }
  let turn = 0
  const clients = new CallLoop(() => `${gateways[turn++ % 2]!.url('eth-1')}?apikey=${apiKey}`, 4)
  t.teardown(() => clients.stop())
  await clients.more(200)

  const [n1, n2, n3] = cluster.nodes
  const before = (await cluster.streamState(stream))?.lastSeq ?? 0
  await n1!.kill()
  // Several intervals of both gateways stored by the two nodes left.
  const failedOver = await within(20_000, async () => ((await cluster.streamState(stream))?.lastSeq ?? 0) >= before + 10)
  t.not(failedOver, undefined, 'with n1 killed, the stream keeps taking usage')
  await clients.more(200)
  await n1!.restart()
  const caughtUp = await within(20_000, async () => (await cluster.streamState(stream))?.current.includes('n1') ?? false)
  t.not(caughtUp, undefined, 'n1 restarted catches up')
  await clients.more(200)

  await Promise.all([n2!.kill(), n3!.kill()])
  await clients.more(400)
  const held = await within(10_000, async () => (await pending()) > 0)
  t.not(held, undefined, 'without a quorum, usage waits in the outboxes')
  await Promise.all([n2!.restart(), n3!.restart()])
  await clients.more(200)
  const counts = await clients.stop()
  t.equal(counts.failed, 0, `no call failed: ${counts.failures.join(' | ')}`)
  // Delivered while the gateways run: the graceful stop below has only the last interval to send.
  const delivered = await within(30_000, async () => (await pending()) === 0)
  t.not(delivered, undefined, 'once a quorum is back, the outboxes deliver what they held')

  for (const gw of gateways) gw.signal('SIGTERM')
  for (const gw of gateways) t.same(await gw.exited, { code: 0, signal: null }, 'each gateway stops cleanly')
  for (const gw of gateways)
    t.notOk(
      gw.logs.some((l) => l.msg === 'events left in the outbox; the next start sends them'),
      'with its outbox emptied',
    )
  t.equal(await usageOf(keyId), counts.served + probes, `the usage events add up to the ${counts.served + probes} calls served, exactly`)
})
