/**
 * Rewrites the tables of docs/ that are rendered from the code: each sits between
 * `<!-- <name>:start -->` and `<!-- <name>:end -->` in its page. Run with `npm run docs` after
 * changing an error registry or the configuration schema; test/docs/tables.test.ts checks that
 * the committed pages equal what this writes.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { renderConfigTable } from '../schemas/config-table.js'
import { renderApiErrorTable } from '../src/dashboard/api-errors.js'
import { renderErrorTable } from './error-table.js'
import { renderCostTable } from '../src/rpc/cost-table.js'

export const DOCS_DIR = join(import.meta.dirname, '..', 'docs')

/** Each rendered table: its marker name, the page that holds it, and its renderer. */
export const RENDERED_TABLES = [
  { name: 'error-table', page: 'errors.md', render: renderErrorTable },
  { name: 'api-error-table', page: 'dashboard.md', render: renderApiErrorTable },
  { name: 'config-table', page: 'configuration.md', render: renderConfigTable },
  { name: 'cost-table', page: 'costs.md', render: renderCostTable },
] as const

/** `text` with every marked table replaced by what its renderer gives now; unmarked text is kept as it is. */
export function fillTables(text: string): string {
  let filled = text
  for (const { name, render } of RENDERED_TABLES) {
    const marked = new RegExp(`(<!-- ${name}:start -->)[\\s\\S]*?(<!-- ${name}:end -->)`, 'g')
    filled = filled.replace(marked, (_, start: string, end: string) => `${start}\n${render()}\n${end}`)
  }
  return filled
}

/** Every page of docs/ as it is and as `npm run docs` would write it, by file name. */
export function renderedPages(dir = DOCS_DIR): Map<string, { committed: string; rendered: string }> {
  const pages = new Map<string, { committed: string; rendered: string }>()
  for (const name of readdirSync(dir)
    .filter((file) => file.endsWith('.md'))
    .sort()) {
    const committed = readFileSync(join(dir, name), 'utf8')
    pages.set(name, { committed, rendered: fillTables(committed) })
  }
  return pages
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const [name, { committed, rendered }] of renderedPages()) {
    if (rendered === committed) continue
    writeFileSync(join(DOCS_DIR, name), rendered)
    console.log(`wrote docs/${name}`)
  }
}
