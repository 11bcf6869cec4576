import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** A plan of the catalog file, as written (limits, nodes, price…). */
export type CatalogPlan = Record<string, any> & { id: string; limits: Record<string, number> }

/**
 * The default plan catalog with more plans, each made from Tier 3's, written to a file removed at
 * teardown: its path, for the gateway's `catalog` option.
 * @example
 * const catalog = catalogWith(t, (tier3) => [{ ...tier3, id: 'wide', name: 'Wide', limits: { fullRps: 1e7, archiveRps: 250 } }])
 */
export function catalogWith(t: { teardown(fn: () => unknown): void }, plans: (tier3: CatalogPlan) => CatalogPlan[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-catalog-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const catalog = JSON.parse(readFileSync(new URL('../../schemas/catalogs/default.json', import.meta.url), 'utf8'))
  delete catalog.$schema
  const tier3 = catalog.plans.find((p: CatalogPlan) => p.id === 'tier-3') as CatalogPlan
  catalog.plans.push(...plans(tier3))
  const path = join(dir, 'catalog.json')
  writeFileSync(path, JSON.stringify(catalog))
  return path
}
