import t from 'tap'
import { anvilGateway } from '../helpers/anvil-gateway.js'
import { rpc } from '../helpers/gateway.js'
import { waitFor } from '../helpers/eventually.js'
import { METHODS } from '../../src/rpc/method-table.js'
import type { UsageRecorded } from '../../src/events/types.js'
import { replayCommand, sumsOf, usageFromEventsCommand, usageJson } from './usage-scenario.js'

// Compute units end to end: a trace costs more units than a balance read, in the UsageRecorded
// events and in `tollgate usage`, with the configured costs; a replay gives the same units.
t.setTimeout(600_000)
// A cost from the configuration, to see it applied: the table's for the trace.
const BALANCE_UNITS = METHODS.eth_getBalance!.cost + 4
const {
  anvil,
  tg,
  key: reader,
  url,
} = await anvilGateway(t, {
  nodeWs: false,
  usageIntervalMs: 200,
  config: { methodCosts: { eth_getBalance: BALANCE_UNITS } },
})
const tracer = await tg.createKey('tier-3')
const [from] = (await anvil.rpc('eth_accounts')).result
const tx = (await anvil.rpc('eth_sendTransaction', [{ from, to: from, value: '0x1' }])).result as string
const CALLS = 6
/** Checks before the tests run throw, rather than assert (tap ends the top level at its first assertion's turn). */
const must = (ok: boolean, what: string, answer: unknown): void => {
  if (!ok) throw new Error(`${what}: ${JSON.stringify(answer)}`)
}
for (let i = 0; i < CALLS; i++) {
  const balance = await rpc(url, { jsonrpc: '2.0', id: i, method: 'eth_getBalance', params: [from, 'latest'] }, { apiKey: reader.apiKey })
  must(typeof balance.json.result === 'string', 'a balance', balance.json)
  const trace = await rpc(url, { jsonrpc: '2.0', id: i, method: 'debug_traceTransaction', params: [tx] }, { apiKey: tracer.apiKey })
  must(typeof trace.json.result === 'object', 'a trace', trace.json)
}
// A batch counts each call at its own cost.
const batch = await rpc(
  url,
  [
    { jsonrpc: '2.0', id: 1, method: 'eth_getBalance', params: [from, 'latest'] },
    { jsonrpc: '2.0', id: 2, method: 'eth_blockNumber', params: [] },
  ],
  { apiKey: reader.apiKey },
)
must(batch.json.length === 2, 'two answers', batch.json)

const usageEvents = async (): Promise<UsageRecorded[]> => {
  const out: UsageRecorded[] = []
  await tg.gateway.log.readAll(1, (b) => {
    for (const { event } of b) if (event.type === 'UsageRecorded') out.push(event)
  })
  return out
}
const callsOf = (events: UsageRecorded[], keyId: string) => events.filter((e) => e.keyId === keyId).reduce((n, e) => n + e.requests, 0)
await waitFor(
  async () => {
    const events = await usageEvents()
    return callsOf(events, reader.keyId) === CALLS + 2 && callsOf(events, tracer.keyId) === CALLS
  },
  'the usage events of both keys',
  60_000,
)

t.test('in the events: each call its method’s units, the configured cost included', async (t) => {
  const events = await usageEvents()
  const unitsOf = (keyId: string) => events.filter((e) => e.keyId === keyId).reduce((n, e) => n + (e.units ?? Number.NaN), 0)
  t.equal(unitsOf(reader.keyId), (CALLS + 1) * BALANCE_UNITS + METHODS.eth_blockNumber!.cost)
  t.equal(unitsOf(tracer.keyId), CALLS * METHODS.debug_traceTransaction!.cost)
  t.ok(unitsOf(tracer.keyId) / CALLS > (unitsOf(reader.keyId) / (CALLS + 2)) * 5, 'a trace costs several times a balance read')
})

t.test('tollgate usage shows the same units, and a replay gives them again', async (t) => {
  await tg.stop() // flushes the last interval; a replay runs with the gateway stopped
  // Both read the stopped gateway's folder: together; so do both after the replay.
  const [events, before] = await Promise.all([usageFromEventsCommand(tg.configPath), usageJson(tg.configPath)])
  t.same(before, sumsOf(events), 'the sums of the events, units included')
  const units = (lines: typeof before, keyId: string) => lines.find((l) => l.keyId === keyId)?.units
  t.equal(units(before, tracer.keyId), CALLS * METHODS.debug_traceTransaction!.cost)
  t.ok(units(before, tracer.keyId)! > units(before, reader.keyId)!, 'the tracer spent more units with fewer calls')
  await replayCommand(tg.configPath)
  const [after, byHour] = await Promise.all([usageJson(tg.configPath), usageJson(tg.configPath, ['--by', 'hour'])])
  t.same(after, before, 'the same units after a replay')
  t.same(byHour, sumsOf(events, { by: 'hour' }))
})
