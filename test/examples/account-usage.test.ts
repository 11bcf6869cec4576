import t from 'tap'
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { connect } from '@nats-io/transport-node'
import { jetstream } from '@nats-io/jetstream'
import { encodeEvent } from '../../src/events/codec.js'
import { subjectOf, type UsageRecorded } from '../../src/events/types.js'
import { rpc } from '../helpers/gateway.js'
import { callWithTwoKeys, startGatewayOnNats, sumsOf, type UsageLine } from '../cli/usage-scenario.js'
import { until } from '../helpers/eventually.js'

// examples/account-usage.ts, run as a consumer runs it, against a real gateway on a real
// nats-server: it prints one account's usage per key, equal to the calls made with its key, live,
// nothing of another account, and a fact stored twice is counted once.
t.setTimeout(120_000)
const EXAMPLE = fileURLToPath(new URL('../../examples/account-usage.ts', import.meta.url))
const ROOT = fileURLToPath(new URL('../../', import.meta.url))
/** Longest wait for the example to print what the gateway's usage events say (intervals of 200 ms, then the outbox). */
const PRINT_WAIT_MS = 20_000

const { tg, nats } = await startGatewayOnNats(t)
// Key a: 11 calls, 1 answered with an error; key b (another account): 4 calls, 1 error.
const [a, b] = await callWithTwoKeys(tg)

const child = spawn(process.execPath, ['--import', 'tsx', EXAMPLE, '--nats', nats.url, '--account', a!.accountId, '--stream', tg.config.events.stream], {
  cwd: ROOT,
  stdio: ['ignore', 'pipe', 'pipe'],
})
const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)))
t.teardown(() => {
  if (child.exitCode === null && child.signalCode === null) process.kill(child.pid!, 'SIGKILL')
})
let stderr = ''
child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
const printed: UsageLine[] = []
createInterface({ input: child.stdout }).on('line', (line) => {
  printed.push(JSON.parse(line) as UsageLine)
})

/** The first line printed (already or to come) that `match` accepts; bounded by PRINT_WAIT_MS, so that the test cannot hang. */
async function printedLine(match: (line: UsageLine) => boolean): Promise<UsageLine> {
  await until(() => printed.some(match) || child.exitCode !== null, PRINT_WAIT_MS)
  const found = printed.find(match)
  if (found !== undefined) return found
  if (child.exitCode !== null) throw new Error(`the example exited (${child.exitCode}): ${stderr}`)
  throw new Error(`the example printed no such line in ${PRINT_WAIT_MS} ms; it printed ${JSON.stringify(printed)}; stderr: ${stderr}`)
}

/** Every UsageRecorded in the stream, as a consumer reading all of it would see them. */
async function usageInStream(): Promise<UsageRecorded[]> {
  const out: UsageRecorded[] = []
  await tg.gateway.log.readAll(1, (batch) => {
    for (const { event } of batch) if (event.type === 'UsageRecorded') out.push(event)
  })
  return out
}

t.test("it prints the calls made with the account's key, and their bytes as the stream has them", async (t) => {
  const line = await printedLine((l) => l.keyId === a!.keyId && l.requests >= a!.calls)
  const [sums] = sumsOf((await usageInStream()).filter((e) => e.keyId === a!.keyId))
  t.same(line, { accountId: a!.accountId, keyId: a!.keyId, requests: 11, units: sums!.units, errors: 1, bytesIn: sums!.bytesIn, bytesOut: sums!.bytesOut })
  t.ok(line.units > 0, 'units counted')
  t.ok(line.bytesIn > 0 && line.bytesOut > 0, 'bytes counted')
})

t.test('live: a fact stored twice is counted once, and new calls show up', async (t) => {
  // A usage event of key a again at a new seq, without a msgID: as an outbox re-sending after
  // JetStream's duplicate window stores it.
  const again = (await usageInStream()).find((e) => e.keyId === a!.keyId)!
  const nc = await connect({ servers: nats.url })
  await jetstream(nc).publish(subjectOf(again), encodeEvent(again))
  await nc.close()
  const url = tg.url('eth-1')
  for (let i = 0; i < 2; i++) t.equal((await rpc(url, { jsonrpc: '2.0', id: i, method: 'eth_blockNumber', params: [] }, { apiKey: a!.apiKey })).status, 200)
  const line = await printedLine((l) => l.keyId === a!.keyId && l.requests >= a!.calls + 2)
  t.equal(line.requests, a!.calls + 2, 'the re-sent event was not counted again')
  t.equal(line.errors, 1)
})

t.test('nothing of another account reaches it (the server filters by the account token)', async (t) => {
  t.ok(printed.length > 0)
  t.same(
    printed.filter((l) => l.accountId !== a!.accountId || l.keyId === b!.keyId),
    [],
  )
})

t.test('it stops on SIGTERM', async (t) => {
  process.kill(child.pid!, 'SIGTERM')
  t.equal(await exited, 0)
})
