import { join } from 'node:path'
import t from 'tap'
import { startNats } from '../../harness/nats-server.js'
import { JetStreamLog } from '../../src/events/jetstream-log.js'
import { partitionOf } from '../../src/events/partitions.js'
import { PARTITION_CHECKPOINT_PREFIX } from '../../src/projections/log-source.js'
import { replay } from '../../src/projections/replay.js'
import { StateStore } from '../../src/store/state-store.js'
import { usageTotals } from '../../src/usage/usage-queries.js'
import { anvilGateway } from '../helpers/anvil-gateway.js'
import { waitFor } from '../helpers/eventually.js'
import { runCli } from '../helpers/cli.js'
import { rpc, startTestGateway, TEST_SECRET, type TestGateway } from '../helpers/gateway.js'
import { tempDir, usageEvent } from '../projections/fixtures.js'

// A gateway on four usage partitions, stopped and started again on the same data folder with the
// same events.partitions: its projection goes on from each partition's checkpoint, and counts what
// another instance appended meanwhile once, and nothing twice.
t.setTimeout(180_000)
const nats = await startNats()
t.teardown(() => nats.stop())
const events = { nats: nats.url, stream: 'RESTART', subjectPrefix: 'rs', partitions: 4 }
const first = await anvilGateway(t, { nats: nats.url, usageIntervalMs: 200, plan: null, config: { events } })
const ACCOUNTS = 6
const keys: Array<{ apiKey: string; accountId: string; keyId: string }> = []
for (let n = 0; n < ACCOUNTS; n++) keys.push(await first.tg.createKey('tier-3'))
/** Calls counted per account so far. */
const calls = new Map<string, number>(keys.map((k) => [k.accountId, 0]))

async function callEach(tg: TestGateway, round: number): Promise<void> {
  for (const [n, key] of keys.entries()) {
    const count = 1 + ((n + round) % 4)
    for (let i = 0; i < count; i++) {
      const answer = await rpc(tg.url('eth-1'), { jsonrpc: '2.0', id: i, method: 'eth_blockNumber', params: [] }, { apiKey: key.apiKey })
      if (answer.status !== 200) throw new Error(`call ${i} of ${key.accountId}: ${answer.status} ${answer.text}`)
    }
    calls.set(key.accountId, calls.get(key.accountId)! + count)
  }
}

/** Every account's requests in the store are the calls counted (bounded wait). */
async function counted(store: StateStore, what: string): Promise<void> {
  await waitFor(() => keys.every((k) => usageTotals(store, { accountId: k.accountId }).requests === calls.get(k.accountId)), what, 20_000)
}

t.test('a gateway restarted with the same partitions resumes without loss or double counting', async (t) => {
  const partitionsUsed = new Set(keys.map((k) => partitionOf(k.accountId, 4)))
  t.ok(partitionsUsed.size > 1, `the accounts are in ${partitionsUsed.size} partitions`)
  await callEach(first.tg, 0)
  await counted(first.tg.gateway.store, 'the first calls in the live projection')
  await first.tg.stop()

  // While it is down, another instance's usage reaches the partitions.
  const other = await JetStreamLog.connect({ servers: nats.url, replicas: 1, ...events })
  const start = Date.now() - (Date.now() % 1000)
  await other.append(
    keys.map((k, n) =>
      usageEvent({ accountId: k.accountId, keyId: k.keyId, instance: 'gw-other', intervalStart: start, requests: 10 + n, units: 26 * (10 + n) }),
    ),
  )
  for (const [n, k] of keys.entries()) calls.set(k.accountId, calls.get(k.accountId)! + 10 + n)

  const again = await startTestGateway(t, { networks: first.networks, nats: nats.url, dataDir: first.tg.dataDir, usageIntervalMs: 200, config: { events } })
  await counted(again.gateway.store, 'the other instance’s usage, caught up from the checkpoints')
  await callEach(again, 1)
  await counted(again.gateway.store, 'the calls after the restart')
  const meta = again.gateway.store.table('meta')
  for (const [p, partition] of other.partitions.entries()) {
    t.equal(meta.get(`${PARTITION_CHECKPOINT_PREFIX}${p}`) ?? 0, await partition.lastSeq(), `partition ${p}: applied up to its last seq`)
  }
  await again.stop()
  // What a replay of the whole log counts: the same, so the live store counted nothing twice.
  const store = StateStore.open(join(tempDir(t, 'restart-replay'), 'state'))
  const replayed = await replay(store, other)
  for (const k of keys) t.equal(usageTotals(store, { accountId: k.accountId }).requests, calls.get(k.accountId), `${k.accountId}: replayed`)
  await store.close()
  await other.close()

  // `tollgate replay` on the gateway's configuration reads the partitions too: the same events, the same state.
  const cli = await runCli(['replay', '--config', again.configPath], { TOLLGATE_SECRET: TEST_SECRET }, 60_000)
  t.equal(cli.code, 0, cli.stderr)
  t.same(cli.last, replayed, 'tollgate replay: the same events and digest')
})
