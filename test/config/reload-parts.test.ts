import t from 'tap'
import { parseConfig } from '../../src/config/load.js'
import { ReloadPartFailed } from '../../src/main/errors.js'
import { applyParts, NO_NODE_CHANGE, reloadParts, type ReloadStep, type ReloadTargets } from '../../src/main/reload.js'
import { loadPlanCatalog } from '../../src/plans/catalog.js'
import type { UpstreamNode } from '../../src/upstream/node.js'
import type { UpstreamsChange } from '../../src/upstream/upstreams.js'

// The reload's parts, in their order, each given its named settings from the config; a part that
// throws is named, with what was applied before it and what was left.

const config = parseConfig({
  listen: { host: '127.0.0.1', port: 8080 },
  limits: { upstreamTimeoutMs: 7000, queueMs: 0, ipThrottle: { rejections: 9 } },
  health: { pollMs: 750 },
  evm: { gasCap: 1_000_000, timeoutMs: 300 },
  networks: {
    'eth-1': { chainId: 1, upstreams: [{ url: 'http://127.0.0.1:8545', kind: 'full' }], broadcastTransactions: true, forwardMethods: ['debug_x'] },
    'bsc-1': { chainId: 56, upstreams: [{ url: 'http://127.0.0.1:8546', kind: 'full' }] },
  },
})
const catalog = loadPlanCatalog(config.plans.catalog)
/** A node as the nodes part hands it on: only its identity matters to the parts after it. */
const node = (name: string) => ({ name }) as unknown as UpstreamNode
const dropped = [node('old')]
const built = [{ network: 'eth-1', node: node('new') }]
const change: UpstreamsChange = { networksAdded: [], networksRemoved: ['pol-1'], nodes: [], dropped, built }

/** Every target records what it was given, in one list, in the order it was called. */
function recordingTargets(throwAt?: string): { targets: ReloadTargets; calls: [string, unknown][] } {
  const calls: [string, unknown][] = []
  const record =
    (name: string, answer?: unknown) =>
    (next: unknown): any => {
      calls.push([name, next])
      if (name === throwAt) throw new Error(`${name} broke`)
      return answer
    }
  const targets: ReloadTargets = {
    upstreams: { apply: record('upstreams', change), retire: record('retire') },
    upstreamsOptions: (c) => ({ methodSetAsideMs: c.health.methodSetAsideMs }),
    subscriptions: { apply: record('subscriptions') },
    accountPools: { apply: record('accountPools') },
    nodeHeads: { apply: record('nodeHeads') },
    heads: { forget: record('forget') },
    networkLabels: { add: record('labels') },
    transactions: { broadcastOn: record('broadcastOn') },
    methodRules: { apply: record('methodRules') },
    caller: { apply: record('caller') },
    inForce: { apply: record('inForce') },
    ips: { apply: record('ips') },
    keys: { apply: record('keys') },
    dashboard: { apply: record('dashboard') },
  }
  return { targets, calls }
}
const step = (): ReloadStep => ({ config, catalog, nodes: NO_NODE_CHANGE })

t.test('the parts go in the order that never leaves a call without a node, each with its named settings', async (t) => {
  const { targets, calls } = recordingTargets()
  const parts = reloadParts(targets)
  t.same(
    parts.map((p) => p.name),
    [
      'nodes',
      'subscriptions',
      'account pools',
      'node heads',
      'retired nodes',
      'heads',
      'metric labels',
      'transactions',
      'method rules',
      'caller',
      'limits',
      'ip throttle',
      'plans',
      'dashboard',
    ],
  )
  const next = step()
  applyParts(parts, next)
  t.equal(next.nodes, change, 'what the nodes part changed is handed to the parts after it')
  t.same(calls, [
    ['upstreams', { networks: config.networks, options: { methodSetAsideMs: config.health.methodSetAsideMs } }],
    ['subscriptions', { timeoutMs: 7000 }],
    ['accountPools', { droppedShared: dropped }],
    ['nodeHeads', { built, dropped, intervalMs: 750, timeoutMs: 5000 }],
    ['retire', dropped],
    ['forget', 'pol-1'],
    ['labels', ['eth-1', 'bsc-1']],
    ['broadcastOn', ['eth-1']],
    ['methodRules', { forwardMethods: { 'eth-1': ['debug_x'], 'bsc-1': undefined } }],
    ['caller', { timeoutMs: 7000, hedge: config.hedge, evm: config.evm }],
    ['inForce', { config }],
    ['ips', { limits: config.limits.ipThrottle }],
    ['keys', { catalog }],
    ['dashboard', { config, catalog }],
  ])
  t.equal((calls[9]![1] as { evm: { gasCap: number } }).evm.gasCap, 1_000_000, "the EVM's bounds go to the caller")
})

t.test('the nodes are retired only after the subscriptions, the account pools and the head monitor moved off them', async (t) => {
  const { targets, calls } = recordingTargets()
  applyParts(reloadParts(targets), step())
  const at = (name: string) => calls.findIndex(([n]) => n === name)
  for (const before of ['upstreams', 'subscriptions', 'accountPools', 'nodeHeads']) t.ok(at(before) < at('retire'), `${before} before retire`)
  t.ok(at('retire') < at('inForce'), 'the limits after the nodes')
})

t.test('without a dashboard, no dashboard part', async (t) => {
  const { targets } = recordingTargets()
  t.notOk(
    reloadParts({ ...targets, dashboard: undefined }).some((p) => p.name === 'dashboard'),
    'no part named dashboard',
  )
})

t.test('a part that throws stops the reload there, named, with what was applied and what was left', async (t) => {
  const { targets, calls } = recordingTargets('nodeHeads')
  let failed: unknown
  try {
    applyParts(reloadParts(targets), step())
  } catch (err) {
    failed = err
  }
  t.ok(failed instanceof ReloadPartFailed, 'a ReloadPartFailed')
  const f = failed as ReloadPartFailed
  t.equal(f.part, 'node heads')
  t.same(f.applied, ['nodes', 'subscriptions', 'account pools'])
  t.same(f.notApplied, ['retired nodes', 'heads', 'metric labels', 'transactions', 'method rules', 'caller', 'limits', 'ip throttle', 'plans', 'dashboard'])
  t.match(f.message, /node heads part failed: nodeHeads broke/)
  t.equal((f.cause as Error).message, 'nodeHeads broke', 'the cause kept')
  t.same(
    calls.map(([n]) => n),
    ['upstreams', 'subscriptions', 'accountPools', 'nodeHeads'],
    'no part after it was called: the dropped nodes are not retired',
  )
})

t.test('applyParts runs any list in its order', async (t) => {
  const seen: string[] = []
  applyParts(
    ['a', 'b', 'c'].map((name) => ({ name, apply: (n: string[]) => n.push(name) })),
    seen,
  )
  t.same(seen, ['a', 'b', 'c'])
})
