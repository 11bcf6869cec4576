import { rpc, TEST_SECRET, type TestGateway } from '../helpers/gateway.js'
import { anvilGateway } from '../helpers/anvil-gateway.js'
import { startNats, type NatsServer } from '../../harness/nats-server.js'
import { runCli, type CliResult } from '../helpers/cli.js'
import type { UsageRecorded } from '../../src/events/types.js'
import { until } from '../helpers/eventually.js'

/** Shared by the `tollgate usage` tests on the embedded log and on NATS (tap runs only *.test.ts). */

const HOUR_MS = 3_600_000
const env = { TOLLGATE_SECRET: TEST_SECRET }
/** The longest wait for the gateway's usage events to reach the log (intervals of 200 ms, then the outbox). */
const USAGE_WAIT_MS = 15_000

export interface UsageLine {
  keyId: string
  accountId: string
  period?: string
  requests: number
  units: number
  errors: number
  bytesIn: number
  bytesOut: number
}

/** Calls made per key: `calls` answered by the node, `errors` of them answered with a JSON-RPC error. */
export interface KeyCalls {
  accountId: string
  keyId: string
  apiKey: string
  calls: number
  errors: number
}

/** anvil, a nats-server and a gateway on both whose usage intervals are 200 ms, all stopped at teardown. */
export async function startGatewayOnNats(t: { teardown(fn: () => unknown): void }): Promise<{ tg: TestGateway; nats: NatsServer }> {
  const nats = await startNats()
  t.teardown(() => nats.stop())
  const { tg } = await anvilGateway(t, { nodeWs: false, archive: true, nats: nats.url, usageIntervalMs: 200, plan: null })
  return { tg, nats }
}

/**
 * Make calls with two keys (singles, a batch, a call the node answers with an error) and wait,
 * bounded, until the log's UsageRecorded events of both keys count every call. Throws, rather
 * than asserts, on an unexpected answer: it runs before the tests, at the top of the file.
 */
export async function callWithTwoKeys(tg: TestGateway): Promise<KeyCalls[]> {
  const a = await tg.createKey('tier-3')
  const b = await tg.createKey('tier-1', [{ network: 'eth-1', kind: 'full' }])
  const url = tg.url('eth-1')
  const call = (id: number, method = 'eth_blockNumber', params: unknown[] = []) => ({ jsonrpc: '2.0', id, method, params })
  const bad = call(99, 'eth_getBalance', ['0xnot-an-address', 'latest'])
  const expect = async (apiKey: string, body: unknown, check: (json: any) => boolean): Promise<void> => {
    const answer = await rpc(url, body, { apiKey })
    if (answer.status !== 200 || !check(answer.json)) throw new Error(`unexpected answer to ${JSON.stringify(body)}: ${answer.status} ${answer.text}`)
  }
  const result = (json: any) => typeof json?.result === 'string'
  for (let i = 0; i < 6; i++) await expect(a.apiKey, call(i), result)
  await expect(a.apiKey, [call(1), call(2, 'eth_chainId'), call(3), call(4, 'eth_gasPrice')], (json) => Array.isArray(json) && json.every(result))
  await expect(a.apiKey, bad, (json) => typeof json?.error?.code === 'number')
  for (let i = 0; i < 3; i++) await expect(b.apiKey, call(i, 'eth_chainId'), result)
  await expect(b.apiKey, bad, (json) => typeof json?.error?.code === 'number')
  const keys = [
    { ...a, calls: 11, errors: 1 },
    { ...b, calls: 4, errors: 1 },
  ]

  // Usage reaches the log on the meter's interval, through the outbox: wait for it, bounded by
  // USAGE_WAIT_MS so that the scenario cannot hang.
  let counted: number[] = []
  const arrived = await until(async () => {
    const usage = await usageEventsOf(tg)
    counted = keys.map((k) => usage.filter((e) => e.keyId === k.keyId).reduce((n, e) => n + e.requests, 0))
    return counted.every((n, i) => n === keys[i]!.calls)
  }, USAGE_WAIT_MS)
  if (!arrived) throw new Error(`usage events count ${counted.join(', ')} calls after ${USAGE_WAIT_MS} ms, not ${keys.map((k) => k.calls).join(', ')}`)
  return keys
}

/** Every UsageRecorded in the gateway's log. */
async function usageEventsOf(tg: TestGateway): Promise<UsageRecorded[]> {
  const out: UsageRecorded[] = []
  for (let from = 1; ; ) {
    const batch = await tg.gateway.log.read(from, 1000)
    if (batch.length === 0) return out
    for (const s of batch) if (s.event.type === 'UsageRecorded') out.push(s.event)
    from = batch[batch.length - 1]!.seq + 1
  }
}

/** Run `tollgate <args>`; throws with its stderr unless it exits with 0. */
async function cli(args: string[], timeoutMs?: number): Promise<CliResult> {
  const out = await runCli(args, env, timeoutMs)
  if (out.code !== 0) throw new Error(`tollgate ${args.join(' ')} exited with ${out.code}: ${out.stderr}`)
  return out
}

/** The UsageRecorded events as `tollgate events` prints them: what an operator would sum. */
export async function usageFromEventsCommand(configPath: string): Promise<UsageRecorded[]> {
  const out = await cli(['events', '--config', configPath])
  return out.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as UsageRecorded & { seq: number })
    .filter((e) => e.type === 'UsageRecorded')
}

/** Sums of UsageRecorded per key (and UTC hour or day), as `usage --json` prints them and in its order. */
export function sumsOf(events: readonly UsageRecorded[], opts: { by?: 'hour' | 'day'; fromHour?: number } = {}): UsageLine[] {
  const sums = new Map<string, UsageLine>()
  const seen = new Set<string>()
  for (const e of events) {
    if (seen.has(e.id)) continue // the projection counts an id once; so does any consumer
    seen.add(e.id)
    const hour = e.intervalStart - (e.intervalStart % HOUR_MS)
    if (opts.fromHour !== undefined && hour < opts.fromHour) continue
    const start = opts.by === 'hour' ? hour : opts.by === 'day' ? hour - (hour % (24 * HOUR_MS)) : undefined
    const period = start === undefined ? undefined : new Date(start).toISOString()
    const id = `${e.accountId}|${e.keyId}|${period ?? ''}`
    const row = sums.get(id) ?? {
      keyId: e.keyId,
      accountId: e.accountId,
      ...(period ? { period } : {}),
      requests: 0,
      units: 0,
      errors: 0,
      bytesIn: 0,
      bytesOut: 0,
    }
    row.requests += e.requests
    // As docs/costs.md tells a consumer: a version 1 event's calls count 26 units each.
    row.units += e.units ?? e.requests * 26
    row.errors += e.errors
    row.bytesIn += e.bytesIn
    row.bytesOut += e.bytesOut
    sums.set(id, row)
  }
  const order = (r: UsageLine) => `${r.accountId}|${r.keyId}|${r.period ?? ''}`
  return [...sums.values()].sort((x, y) => (order(x) < order(y) ? -1 : order(x) > order(y) ? 1 : 0))
}

/** `tollgate usage --json` with more arguments: its lines parsed. */
export async function usageJson(configPath: string, args: string[] = []): Promise<UsageLine[]> {
  const out = await cli(['usage', '--config', configPath, '--json', ...args])
  return out.stdout === ''
    ? []
    : out.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as UsageLine)
}

/** `tollgate replay`: the digest it printed. */
export async function replayCommand(configPath: string): Promise<string> {
  const out = await cli(['replay', '--config', configPath], 120_000)
  if (!/^[0-9a-f]{64}$/.test(out.last?.digest)) throw new Error(`replay printed no digest: ${out.stdout}`)
  return out.last.digest as string
}
