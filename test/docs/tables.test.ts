import t from 'tap'
import { Type } from '@sinclair/typebox'
import { configSchema } from '../../schemas/config.js'
import { renderConfigTable } from '../../schemas/config-table.js'
import { Strict, MapOf } from '../../schemas/json-schema.js'
import { fillTables, RENDERED_TABLES, renderedPages } from '../../scripts/docs.js'

t.test('every rendered table is in its page, as `npm run docs` writes it', async (t) => {
  const pages = renderedPages()
  for (const { name, page } of RENDERED_TABLES) {
    const marked = new RegExp(`<!-- ${name}:start -->\\n\\|[^]*\\n<!-- ${name}:end -->`)
    t.match(pages.get(page)?.committed ?? '', marked, `docs/${page} has the ${name} markers`)
  }
  for (const [name, { committed, rendered }] of pages) t.equal(committed, rendered, `docs/${name} is up to date (run npm run docs)`)
})

t.test('a marked table is replaced whole, and the text around it is kept', async (t) => {
  const page = 'Before.\n\n<!-- error-table:start -->\n| stale |\n|---|\n<!-- error-table:end -->\n\nAfter.\n'
  const filled = fillTables(page)
  t.not(filled, page)
  t.ok(filled.startsWith('Before.\n\n<!-- error-table:start -->\n| code | HTTP | JSON-RPC | when |\n'))
  t.ok(filled.endsWith('|\n<!-- error-table:end -->\n\nAfter.\n'))
  t.equal(fillTables(filled), filled, 'filling again changes nothing')
  t.equal(fillTables('No table here.\n'), 'No table here.\n')
})

t.test('the config table has a row with the default of every field that has one', async (t) => {
  const table = renderConfigTable()
  let fields = 0
  const visit = (node: { properties?: Record<string, any> }, path: string) => {
    for (const [name, child] of Object.entries(node.properties ?? {})) {
      const field = path === '' ? name : `${path}.${name}`
      if (child.properties !== undefined) visit(child, field)
      else if (child.default !== undefined) {
        fields++
        t.match(table, new RegExp(`^\\| \`${escapeRegex(field)}\` \\| [^|]+ \\| \`${escapeRegex(JSON.stringify(child.default))}\` \\|`, 'm'), field)
      }
    }
  }
  visit(configSchema, '')
  t.ok(fields > 80, `${fields} fields with a default`)
})

t.test('the config table: types, required fields, maps, arrays and cells that would break the table', async (t) => {
  const schema = Strict({
    name: Type.String({ description: 'Shown as <name> | or `a|b`.' }),
    port: Type.Integer({ minimum: 0, maximum: 65535, default: 8080 }),
    mode: Type.Union([Type.Integer({ minimum: 1 }), Type.Literal('auto')], { default: 'auto' }),
    networks: MapOf('^[a-z]+$', Strict({ urls: Type.Array(Strict({ url: Type.String() }), { description: 'Nodes.' }) }), {
      description: 'By slug.',
    }),
    timeouts: MapOf('^[a-z_]+$', Type.Integer({ minimum: 1 }), { default: {} }),
  })
  t.equal(
    renderConfigTable(schema),
    [
      '| field | type | default | description |',
      '|---|---|---|---|',
      '| `name` | string | required | Shown as \\<name> \\| or `a\\|b`. |',
      '| `port` | integer 0 to 65535 | `8080` |  |',
      '| `mode` | integer ≥ 1 or "auto" | `"auto"` |  |',
      '| `networks` | object | required | By slug. |',
      '| `networks.<slug>.urls` | array of object | required | Nodes. |',
      '| `networks.<slug>.urls[].url` | string | required |  |',
      '| `timeouts` | object of integer ≥ 1 | `{}` |  |',
    ].join('\n'),
  )
})

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
