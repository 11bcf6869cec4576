import { METHODS, UNLISTED_COST, UNLISTED_TRACE_COST } from './method-table.js'

/**
 * docs/costs.md's table of compute units, rendered from the method table (`npm run docs`; a test
 * checks the committed page equals it), so that the page can never drift from what is charged.
 */
export function renderCostTable(): string {
  const rows = Object.entries(METHODS).map(([method, spec]) => `| \`${method}\` | ${spec.cost} | ${spec.heavy === true ? 'heavy' : ''} |`)
  return [
    '| method | units | |',
    '|---|---:|---|',
    ...rows,
    `| any other served method (forwarded as it is) | ${UNLISTED_COST} | |`,
    `| any other \`trace_\` method | ${UNLISTED_TRACE_COST} | |`,
  ].join('\n')
}
