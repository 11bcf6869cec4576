import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { generatedSchemaFiles } from '../../schemas/generate.js'
import { compileCheck } from '../../schemas/check.js'
import { planCatalogSchema } from '../../schemas/plans.js'

const schemasDir = join(import.meta.dirname, '..', '..', 'schemas')

t.test('the committed JSON Schema files equal what `npm run schemas` writes', async (t) => {
  const files = await generatedSchemaFiles()
  t.ok(files.has('config.schema.json'))
  t.ok(files.has('plan-catalog.schema.json'))
  for (const [relative, content] of files) {
    let committed = ''
    try {
      committed = readFileSync(join(schemasDir, relative), 'utf8')
    } catch {
      // reported by the equality below
    }
    t.equal(committed, content, `schemas/${relative} is up to date (run npm run schemas)`)
  }
})

t.test('both shipped catalogs validate against the plan catalog schema', async (t) => {
  const check = compileCheck(planCatalogSchema)
  for (const name of ['default', 'set-b']) {
    const catalog = JSON.parse(readFileSync(join(schemasDir, 'catalogs', `${name}.json`), 'utf8'))
    t.same(check(catalog), { ok: true, value: catalog }, name)
  }
})
