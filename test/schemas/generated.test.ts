import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { generatedSchemaFiles } from '../../schemas/generate.js'
import { Ajv2020 } from 'ajv/dist/2020.js'
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

t.test('every published schema is a valid JSON Schema (draft 2020-12)', async (t) => {
  // The gateway compiles them without this check (it costs startup time); it is done here once.
  const ajv = new Ajv2020({ strict: true, allowUnionTypes: true })
  for (const [relative, content] of await generatedSchemaFiles()) {
    t.equal(ajv.validateSchema(JSON.parse(content)), true, `${relative}: ${ajv.errorsText(ajv.errors)}`)
  }
  t.equal(ajv.validateSchema({ type: 'object', minProperties: 'one' }), false, 'the check can fail')
})
