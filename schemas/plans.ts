import type { JsonSchema } from './validate.js'

/**
 * A plan catalog: the plans an operator offers, as data. The gateway ships two
 * (schemas/catalogs/default.json with the spec's set A limits, set-b.json with set B) and an
 * operator may point `plans.catalog` at a file of their own. `npm run schemas` writes this
 * schema to schemas/plan-catalog.schema.json.
 */

const rps = {
  type: ['number', 'null'],
  minimum: 0,
  description: 'Requests per second; null: unlimited; 0: no access to this node kind.',
} as const satisfies JsonSchema

const planSchema = {
  type: 'object',
  properties: {
    id: { type: 'string', pattern: '^[a-z][a-z0-9-]*$', description: 'Stable id, used in events (PlanActivated.planId).' },
    name: { type: 'string', minLength: 1, description: 'Name shown to users.' },
    description: { type: 'string', minLength: 1 },
    priceUsdPerMonth: { type: ['number', 'null'], minimum: 0, description: 'null: free, or no published price.' },
    priceFrom: { type: 'boolean', description: 'The price is a starting price ("from 250 USD per month").' },
    periodMs: {
      type: ['integer', 'null'],
      minimum: 1,
      description: 'How long an activation lasts, in ms; null: no end.',
    },
    limits: {
      type: 'object',
      properties: { fullRps: rps, archiveRps: rps },
      required: ['fullRps', 'archiveRps'],
      additionalProperties: false,
    },
    nodes: {
      description:
        'Which nodes the plan gives: all-full (every full node), choose (count nodes of the user\'s choice, ' +
        'full or archive), all (every full and archive node), dedicated (a node of its own).',
      oneOf: [
        {
          type: 'object',
          properties: { rule: { const: 'choose' }, count: { type: 'integer', minimum: 1 } },
          required: ['rule', 'count'],
          additionalProperties: false,
        },
        {
          type: 'object',
          properties: { rule: { enum: ['all-full', 'all', 'dedicated'] } },
          required: ['rule'],
          additionalProperties: false,
        },
      ],
    },
  },
  required: ['id', 'name', 'description', 'priceUsdPerMonth', 'periodMs', 'limits', 'nodes'],
  additionalProperties: false,
} as const satisfies JsonSchema

export const planCatalogSchema = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  $id: 'urn:tollgate:plan-catalog',
  title: 'Tollgate plan catalog',
  type: 'object',
  properties: {
    $schema: { type: 'string' },
    name: { type: 'string', minLength: 1 },
    description: { type: 'string', minLength: 1 },
    plans: { type: 'array', minItems: 1, items: planSchema },
  },
  required: ['name', 'description', 'plans'],
  additionalProperties: false,
} as const satisfies JsonSchema
