import t from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadPlanCatalog, parsePlanCatalog } from '../../src/plans/catalog.js'

t.test('the default catalog is the sign-up table with the set A limits', async (t) => {
  const catalog = loadPlanCatalog('default')
  t.same(
    catalog.plans.map((p) => p.id),
    ['free-trial', 'tier-1', 'tier-2', 'tier-3', 'private'],
  )
  const rows = catalog.plans.map((p) => {
    const count = 'count' in p.nodes ? p.nodes.count : undefined
    return [p.id, p.priceUsdPerMonth, p.limits.fullRps, p.limits.archiveRps, p.nodes.rule, count]
  })
  t.same(rows, [
    ['free-trial', null, 500, 0, 'all-full', undefined],
    ['tier-1', 50, 500, 250, 'choose', 1],
    ['tier-2', 100, 500, 250, 'choose', 3],
    ['tier-3', 300, 500, 250, 'all', undefined],
    ['private', 250, null, null, 'dedicated', undefined],
  ])
  t.equal(catalog.get('free-trial')?.periodMs, 24 * 3_600_000, 'free trial: 24 hours')
  t.equal(catalog.get('private')?.priceFrom, true, 'private: from 250 USD')
  t.equal(catalog.get('nope'), undefined)
})

t.test('set B: one limit for full and archive, its own plan ids, and a word on how it relates to set A', async (t) => {
  const catalog = loadPlanCatalog('set-b')
  t.same(
    catalog.plans.map((p) => [p.id, p.limits.fullRps, p.limits.archiveRps, p.priceUsdPerMonth]),
    [
      ['free', 2, 2, null],
      ['starter', 60, 60, null],
      ['advanced', 150, 150, null],
      ['scale', 350, 350, null],
      ['pro', 500, 500, null],
    ],
  )
  t.match(catalog.description, /mapping/)
})

t.test('a loaded catalog is frozen', async (t) => {
  const catalog = loadPlanCatalog('default')
  t.ok(Object.isFrozen(catalog))
  t.ok(Object.isFrozen(catalog.plans))
  t.ok(Object.isFrozen(catalog.get('tier-1')!.limits))
})

t.test('a catalog file by path; a bad one is refused by field', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-plans-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const plan = {
    id: 'only',
    name: 'Only',
    description: 'The one plan.',
    priceUsdPerMonth: 10,
    periodMs: null,
    limits: { fullRps: 5, archiveRps: 0 },
    nodes: { rule: 'all-full' },
  }
  const path = join(dir, 'mine.json')
  writeFileSync(path, JSON.stringify({ name: 'mine', description: 'Mine.', plans: [plan] }))
  t.equal(loadPlanCatalog(path).get('only')?.limits.fullRps, 5)

  t.throws(() => parsePlanCatalog({ name: 'x', description: 'x', plans: [{ ...plan, nodes: { rule: 'choose' } }] }, 'x.json'), {
    name: 'ConfigError',
    message: 'x.json: /plans/0/nodes/count is required',
  })
  t.throws(() => parsePlanCatalog({ name: 'x', description: 'x', plans: [{ ...plan, nodes: { rule: 'all', count: 2 } }] }, 'x.json'), {
    message: 'x.json: /plans/0/nodes/count is not allowed (unknown field)',
  })
  t.throws(() => parsePlanCatalog({ name: 'x', description: 'x', plans: [{ ...plan, limits: { fullRps: -1, archiveRps: 0 } }] }, 'x.json'), {
    message: 'x.json: /plans/0/limits/fullRps must be >= 0',
  })
  t.throws(() => parsePlanCatalog({ name: 'x', description: 'x', plans: [plan, plan] }, 'x.json'), {
    message: 'x.json: /plans/1/id duplicates the plan id "only"',
  })
  t.throws(() => loadPlanCatalog(join(dir, 'absent.json')), { name: 'ConfigError', message: /absent\.json: cannot read the plan catalog/ })
})
