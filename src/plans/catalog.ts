import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Static } from '@sinclair/typebox'
import { compileCheck, type CheckResult } from '../../schemas/check.js'
import { planCatalogSchema, type planNodesSchema, type planSchema } from '../../schemas/plans.js'
import { ConfigError } from '../config/errors.js'
import { deepFreeze } from '../config/deep-freeze.js'

/** Which nodes a plan gives (schemas/plans.ts describes each rule). */
export type PlanNodes = Static<typeof planNodesSchema>

/** A plan of a catalog: the type of schemas/plans.ts's planSchema, where each field is described. */
export type Plan = Static<typeof planSchema>

export interface PlanCatalog {
  /** The catalog's own name ("default", "set-b", or an operator's). */
  readonly name: string
  readonly description: string
  /** Where it was loaded from (a file path). */
  readonly source: string
  readonly plans: readonly Plan[]
  get(id: string): Plan | undefined
}

/** Catalogs shipped in schemas/catalogs/, selectable by name in `plans.catalog`. */
const SHIPPED_CATALOGS = ['default', 'set-b'] as const

/**
 * Load a plan catalog: `default` (set A) or `set-b` name a shipped catalog, anything else is
 * a file path. Throws ConfigError naming the file and field when it is not a valid catalog.
 *
 * @example
 * loadPlanCatalog('default').get('tier-1')?.limits // { fullRps: 500, archiveRps: 250 }
 */
export function loadPlanCatalog(nameOrPath: string): PlanCatalog {
  const path = (SHIPPED_CATALOGS as readonly string[]).includes(nameOrPath) ? shippedCatalogPath(nameOrPath) : resolve(nameOrPath)
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (cause) {
    throw new ConfigError(path, [{ path: '', message: `cannot read the plan catalog (${(cause as Error).message})` }], { cause })
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (cause) {
    throw new ConfigError(path, [{ path: '', message: `invalid JSON: ${(cause as Error).message}` }], { cause })
  }
  return parsePlanCatalog(json, path)
}

let checkCatalog: ((json: unknown) => CheckResult<Static<typeof planCatalogSchema>>) | undefined

/** Check a parsed catalog against the schema (and for unique ids) and return it frozen. */
export function parsePlanCatalog(json: unknown, source = 'plan catalog'): PlanCatalog {
  checkCatalog ??= compileCheck(planCatalogSchema)
  const result = checkCatalog(json)
  if (!result.ok) throw new ConfigError(source, result.problems)
  const file = result.value
  const seen = new Set<string>()
  file.plans.forEach((plan, i) => {
    // Events name plans by id: two plans with one id would make PlanActivated ambiguous.
    if (seen.has(plan.id)) throw new ConfigError(source, [{ path: `/plans/${i}/id`, message: `duplicates the plan id ${JSON.stringify(plan.id)}` }])
    seen.add(plan.id)
  })
  const plans = deepFreeze(structuredClone(file.plans))
  const byId = new Map(plans.map((plan) => [plan.id, plan]))
  return Object.freeze({
    name: file.name,
    description: file.description,
    source,
    plans,
    get: (id: string) => byId.get(id),
  })
}

/**
 * schemas/catalogs/<name>.json of this package. Found by walking up from this module, so that
 * it resolves both from src/ (tsx, tests) and from the compiled dist/src/ (which holds no JSON).
 */
function shippedCatalogPath(name: string): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  for (;;) {
    const candidate = join(dir, 'schemas', 'catalogs', `${name}.json`)
    if (existsSync(candidate)) return candidate
    const parent = dirname(dir)
    if (parent === dir) throw new ConfigError(name, [{ path: '', message: 'the shipped plan catalog is missing from the package (schemas/catalogs/)' }])
    dir = parent
  }
}
