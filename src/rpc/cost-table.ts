import { METHODS, UNLISTED_COST } from './method-table.js'

/**
 * docs/costs.md's table of compute units, rendered from the method table (`npm run docs`; a test
 * checks the committed page equals it), so that the page can never drift from what is charged:
 * each method with what it reads on the node, its units, and whether it is heavy.
 */
export function renderCostTable(): string {
  const rows = Object.entries(METHODS).map(([method, spec]) => `| \`${method}\` | ${spec.reads} | ${spec.cost} | ${spec.heavy === true ? 'heavy' : ''} |`)
  return [
    '| method | reads | units | |',
    '|---|---|---:|---|',
    ...rows,
    `| any other method a network's \`forwardMethods\` allows (forwarded as it is) | unknown | ${UNLISTED_COST} | heavy |`,
  ].join('\n')
}
