import { startAnvil, type Anvil, type StartAnvilOptions } from '../../harness/anvil.js'
import type { NetworkConfig, UpstreamConfig } from '../../src/config/types.js'
import type { Entitlement } from '../../src/events/types.js'
import { startTestGateway, type TestGateway, type TestGatewayOptions } from './gateway.js'

/** A key made by {@link TestGateway.createKey}. */
export type TestKey = Awaited<ReturnType<TestGateway['createKey']>>

export interface AnvilGatewayOptions extends Omit<TestGatewayOptions, 'networks'> {
  /** How each node is started (chain id, block time, arguments); the network takes its chain id. */
  anvil?: StartAnvilOptions
  /** Nodes of the network, each its own anvil (default 1). */
  anvils?: number
  /** The nodes' names, in order (default: the gateway's own, the node's host:port). */
  names?: string[]
  /** Give the gateway each node's WebSocket too, not only its HTTP (default true). */
  nodeWs?: boolean
  /** Each node also serves archive calls: an archive upstream (HTTP only) after each full one. */
  archive?: boolean
  /** Work on the nodes before the gateway starts (blocks mined, state set): the gateway starts on that chain. */
  beforeGateway?: (anvil: Anvil, anvils: Anvil[]) => Promise<unknown>
  /** The plan of the key made once the gateway runs (default 'tier-3'); null: no key. */
  plan?: string | null
  /** The nodes the key's plan lets the account choose (Tier 1 and 2), as `createKey` takes them. */
  keyNodes?: Entitlement[]
}

export interface AnvilGateway<K extends TestKey | undefined = TestKey> {
  /** The first node (the only one by default). */
  anvil: Anvil
  anvils: Anvil[]
  tg: TestGateway
  /** The key on `plan`, or undefined with `plan: null`. */
  key: K
  /** POST URL of eth-1 (no key in it). */
  url: string
  /** WebSocket URL of eth-1 (no key in it). */
  wsUrl: string
  /** The networks given to the gateway, for a restart on the same nodes (`startTestGateway` with `dataDir`). */
  networks: Record<string, NetworkConfig>
}

/**
 * Real anvil nodes, one for each options object given (`{}` for the defaults), started together;
 * each is stopped at teardown, by its own process (a node that started is stopped even when another
 * failed to).
 * @example
 * const [a, b] = await startAnvils(t, { blockTime: 1 }, { blockTime: 1 })
 */
export async function startAnvils(t: { teardown(fn: () => unknown): void }, ...options: StartAnvilOptions[]): Promise<Anvil[]> {
  const started = await Promise.allSettled(options.map((o) => startAnvil(o)))
  const anvils = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []))
  t.teardown(() => Promise.all(anvils.map((a) => a.stop())))
  const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected')
  if (failed) throw failed.reason
  return anvils
}

/**
 * A real anvil and a real gateway in this process whose one network, eth-1, is that node (full,
 * with its WebSocket), and a key on a plan: the set-up of most tests that call through the
 * gateway. Every node is stopped at teardown, after the gateway.
 * @example
 * const { anvil, tg, key, url } = await anvilGateway(t, { anvil: { chainId: 1 }, limits: { maxBatch: 5 } })
 * await rpc(url, { jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }, { apiKey: key.apiKey })
 * // two nodes named a and b, HTTP only, no key made
 * const { anvils, tg } = await anvilGateway(t, { anvils: 2, names: ['a', 'b'], nodeWs: false, plan: null })
 * const [a, b] = anvils as [Anvil, Anvil]
 */
export async function anvilGateway(t: { teardown(fn: () => unknown): void }, opts: AnvilGatewayOptions & { plan: null }): Promise<AnvilGateway<undefined>>
export async function anvilGateway(t: { teardown(fn: () => unknown): void }, opts?: AnvilGatewayOptions): Promise<AnvilGateway>
export async function anvilGateway(t: { teardown(fn: () => unknown): void }, opts: AnvilGatewayOptions = {}): Promise<AnvilGateway<TestKey | undefined>> {
  const {
    anvil: anvilOptions = {},
    anvils: count = 1,
    names,
    nodeWs = true,
    archive = false,
    beforeGateway,
    plan = 'tier-3',
    keyNodes,
    ...gatewayOptions
  } = opts
  if (names !== undefined && names.length !== count) throw new RangeError(`anvilGateway: ${names.length} names for ${count} node(s)`)
  // Their teardown is registered before the gateway's own: tap runs teardowns last first, so the
  // nodes stop after the gateway that calls them.
  const anvils = await startAnvils(t, ...Array.from({ length: count }, () => anvilOptions))
  if (beforeGateway) await beforeGateway(anvils[0]!, anvils)
  const upstreams = anvils.flatMap((a, i): UpstreamConfig[] => {
    const name = names === undefined ? {} : { name: names[i]! }
    const full: UpstreamConfig = { url: a.url, ...(nodeWs ? { ws: a.wsUrl } : {}), kind: 'full', ...name }
    return archive ? [full, { url: a.url, kind: 'archive' }] : [full]
  })
  const networks: Record<string, NetworkConfig> = { 'eth-1': { chainId: anvilOptions.chainId ?? 31337, upstreams } }
  const tg = await startTestGateway(t, { ...gatewayOptions, networks })
  const key = plan === null ? undefined : await tg.createKey(plan, keyNodes)
  return { anvil: anvils[0]!, anvils, tg, key, url: tg.url('eth-1'), wsUrl: tg.wsUrl('eth-1'), networks }
}
