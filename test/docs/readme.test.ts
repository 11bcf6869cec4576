import t from 'tap'
import { readFileSync } from 'node:fs'
import { renderErrorTable } from '../../src/errors/error-table.js'
import { configSchema } from '../../schemas/config.js'

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8')
const readme = read('README.md')

t.test('the error table of docs/errors.md is the registry', async (t) => {
  const m = /<!-- error-table:start -->\n([\s\S]*?)\n<!-- error-table:end -->/.exec(read('docs/errors.md'))
  t.ok(m, 'docs/errors.md has the error table markers')
  t.equal(m?.[1], renderErrorTable(), 'regenerate it from src/errors/error-table.ts')
})

t.test('the README shows the two commands', async (t) => {
  t.match(readme, /npm ci && npm start/)
  t.match(readme, /npm ci && npm test/)
})

t.test('every limits default in the schema is in docs/http.md', async (t) => {
  const http = read('docs/http.md')
  const limits = (configSchema.properties.limits as unknown as { properties: Record<string, { default: unknown }> }).properties
  for (const [name, spec] of Object.entries(limits)) if (typeof spec.default === 'number') t.match(http, new RegExp(`${name}\\b[^\\n]*${spec.default}|${spec.default}[^\\n]*${name}`), name)
})

t.test('the API error table of docs/dashboard.md is the dashboard API registry', async (t) => {
  const { renderApiErrorTable } = await import('../../src/dashboard/api-errors.js')
  const m = /<!-- api-error-table:start -->\n([\s\S]*?)\n<!-- api-error-table:end -->/.exec(read('docs/dashboard.md'))
  t.ok(m, 'docs/dashboard.md has the API error table markers')
  t.equal(m?.[1], renderApiErrorTable(), 'regenerate it from src/dashboard/api-errors.ts')
})
