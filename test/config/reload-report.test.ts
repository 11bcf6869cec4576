import t from 'tap'
import { parseConfig } from '../../src/config/load.js'
import { reloadReport } from '../../src/main/reload.js'
import { loadPlanCatalog, parsePlanCatalog } from '../../src/plans/catalog.js'
import type { UpstreamsChange } from '../../src/upstream/upstreams.js'

// What an applied reload reports it changed: its log line and `tollgate reload`'s answer.

const base = {
  listen: { host: '127.0.0.1', port: 8080 },
  networks: { 'eth-1': { chainId: 1, upstreams: [{ url: 'http://127.0.0.1:8545', kind: 'full' }] } },
}
const running = parseConfig(base)
const catalog = loadPlanCatalog('default')
const noNodes: Pick<UpstreamsChange, 'networksAdded' | 'networksRemoved' | 'nodes'> = { networksAdded: [], networksRemoved: [], nodes: [] }
const report = (change: Record<string, unknown>, nodes = noNodes, nextCatalog = catalog) =>
  reloadReport({ config: running, catalog }, { config: parseConfig({ ...base, ...change }), catalog: nextCatalog }, nodes)

t.test('a reload that changes nothing reports nothing', async (t) => {
  t.same(report({}), {})
})

t.test('limits, health and hedging are reported by the paths that changed', async (t) => {
  t.same(report({ limits: { queueMs: 0, ipThrottle: { rejections: 10 } }, health: { pollMs: 500 }, hedge: { enabled: true } }), {
    limits: ['limits.queueMs', 'limits.ipThrottle.rejections'],
    health: ['health.pollMs'],
    hedge: ['hedge.enabled'],
  })
})

t.test('the networks and nodes are reported as the nodes were changed', async (t) => {
  const nodes = {
    networksAdded: ['bsc-1'],
    networksRemoved: ['pol-1'],
    nodes: [{ network: 'eth-1', added: ['node-b'], removed: ['node-a'], changed: [] }],
  }
  t.same(report({}, nodes), nodes)
})

t.test("a kept network's other settings are reported by path, its nodes and consensus are not, a new network's are not", async (t) => {
  t.same(
    report({
      networks: {
        'eth-1': {
          chainId: 1,
          upstreams: [{ url: 'http://127.0.0.1:8546', kind: 'full' }],
          consensus: { participants: 1, agreement: 1 },
          broadcastTransactions: true,
        },
        'bsc-1': { chainId: 56, upstreams: [{ url: 'http://127.0.0.1:8547', kind: 'archive' }], broadcastTransactions: true },
      },
    }),
    { networks: ['networks.eth-1.broadcastTransactions'] },
  )
})

t.test('the plans added, removed and changed are reported by id, and a new catalog by its name', async (t) => {
  const [first, second, ...rest] = catalog.plans
  const changed = { ...second, name: `${second.name} (renamed)` }
  const added = { ...first, id: 'tier-9' }
  const next = parsePlanCatalog({ name: 'operator', description: 'An operator’s own plans.', plans: [changed, ...rest, added] }, 'operator.json')
  t.same(report({}, noNodes, next), { plans: { added: ['tier-9'], removed: [first.id], changed: [second.id], catalog: 'operator' } })
  t.same(report({}, noNodes, loadPlanCatalog('default')), {}, 'the same catalog read again is no change')
})
