import { Type } from '@sinclair/typebox'
import { Nullable, Strict, StringEnum } from './json-schema.js'

/**
 * A plan catalog: the plans an operator offers, as data. The gateway ships two
 * (schemas/catalogs/default.json with the spec's set A limits, set-b.json with set B) and an
 * operator may point `plans.catalog` at a file of their own. `Plan` and `PlanNodes`
 * (src/plans/catalog.ts) are its TypeScript types; `npm run schemas` writes it to
 * schemas/plan-catalog.schema.json.
 */

const Rps = () => Nullable(Type.Number({ minimum: 0, description: 'Requests per second; null: unlimited; 0: no access to this node kind.' }))

const UnitsPerSecond = (kind: string) =>
  Type.Optional(
    Nullable(
      Type.Number({
        exclusiveMinimum: 0,
        description:
          `Compute units per second on ${kind} nodes (docs/costs.md), beside the requests per second: a call must fit both. ` +
          'Absent or null: no units limit.',
      }),
    ),
  )

export const planNodesSchema = Type.Union(
  [
    Strict({ rule: Type.Literal('choose'), count: Type.Integer({ minimum: 1, description: "How many nodes of the user's choice." }) }),
    Strict({ rule: StringEnum(['all-full', 'all', 'dedicated']) }),
  ],
  {
    description:
      "Which nodes the plan gives: all-full (every full node), choose (count nodes of the user's choice, " +
      'full or archive), all (every full and archive node), dedicated (a node of its own).',
  },
)

export const planSchema = Strict({
  id: Type.String({ pattern: '^[a-z][a-z0-9-]*$', description: 'Stable id, used in events (PlanActivated.planId).' }),
  name: Type.String({ minLength: 1, description: 'Name shown to users.' }),
  description: Type.String({ minLength: 1 }),
  priceUsdPerMonth: Nullable(Type.Number({ minimum: 0, description: 'null: free, or no published price.' })),
  priceFrom: Type.Optional(Type.Boolean({ description: 'The price is a starting price ("from 250 USD per month").' })),
  periodMs: Nullable(Type.Integer({ minimum: 1, description: 'How long an activation lasts, in ms; null: no end.' })),
  limits: Strict({
    fullRps: Rps(),
    archiveRps: Rps(),
    fullUnitsPerSecond: UnitsPerSecond('full'),
    archiveUnitsPerSecond: UnitsPerSecond('archive'),
    heavyCallsAtOnce: Type.Optional(
      Nullable(
        Type.Integer({
          minimum: 1,
          description:
            'Heavy calls (traces, debug_trace*, eth_getLogs…) a key may have running at once, on each instance (docs/costs.md). ' +
            'Absent: the configuration’s heavy.atOnce; null: no bound.',
        }),
      ),
    ),
  }),
  nodes: planNodesSchema,
})

export const planCatalogSchema = Strict(
  {
    $schema: Type.Optional(Type.String()),
    name: Type.String({ minLength: 1 }),
    description: Type.String({ minLength: 1 }),
    plans: Type.Array(planSchema, { minItems: 1 }),
  },
  {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: 'urn:tollgate:plan-catalog',
    title: 'Tollgate plan catalog',
  },
)
