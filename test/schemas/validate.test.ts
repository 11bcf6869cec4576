import t from 'tap'
import { applyDefaults, validate, type JsonSchema } from '../../schemas/validate.js'

t.test('type lists, const, maxItems, maxLength', async (t) => {
  t.same(validate({ type: ['integer', 'null'] }, null), { ok: true })
  t.same(validate({ type: ['integer', 'null'] }, 1.5), { ok: false, errors: [{ path: '/', message: 'must be integer or null' }] })
  t.same(validate({ const: 'a' }, 'b'), { ok: false, errors: [{ path: '/', message: 'must be "a"' }] })
  t.same(validate({ type: 'array', maxItems: 1 }, [1, 2]), { ok: false, errors: [{ path: '/', message: 'must have at most 1 item' }] })
  t.same(validate({ type: 'string', maxLength: 2 }, 'abc'), { ok: false, errors: [{ path: '/', message: 'must be at most 2 characters' }] })
  t.same(validate({ type: 'number' }, Number.NaN), { ok: false, errors: [{ path: '/', message: 'must be number' }] })
})

t.test('paths are JSON pointers, with / and ~ in names escaped', async (t) => {
  const schema: JsonSchema = { type: 'object', additionalProperties: { type: 'object', properties: { n: { type: 'integer' } } } }
  t.same(validate(schema, { 'a/b~c': { n: 'x' } }), { ok: false, errors: [{ path: '/a~1b~0c/n', message: 'must be integer' }] })
})

t.test('oneOf: exactly one alternative', async (t) => {
  const schema: JsonSchema = { oneOf: [{ type: 'integer' }, { type: 'number' }] }
  t.same(validate(schema, 1.5), { ok: true })
  t.same(validate(schema, 2), { ok: false, errors: [{ path: '/', message: 'must match exactly one of 2 alternatives, matches 2' }] })
})

t.test('a misspelt schema keyword is refused, not ignored', async (t) => {
  t.throws(() => validate({ minLenght: 1 } as JsonSchema, 'x'), /unsupported JSON Schema keyword "minLenght"/)
})

t.test('applyDefaults: deep, through items and additionalProperties, never into the input', async (t) => {
  const schema: JsonSchema = {
    type: 'object',
    properties: {
      a: { type: 'object', default: {}, properties: { b: { type: 'integer', default: 1 } } },
      list: { type: 'array', items: { type: 'object', properties: { c: { type: 'string', default: 'x' } } } },
      map: { type: 'object', additionalProperties: { type: 'object', properties: { d: { type: 'boolean', default: true } } } },
      wrong: { type: 'object', properties: { e: { type: 'integer', default: 2 } } },
    },
  }
  const input = { list: [{}, { c: 'y' }], map: { k: {} }, wrong: 'not an object' }
  const out = applyDefaults(schema, input)
  t.same(out, { a: { b: 1 }, list: [{ c: 'x' }, { c: 'y' }], map: { k: { d: true } }, wrong: 'not an object' })
  t.same(input, { list: [{}, { c: 'y' }], map: { k: {} }, wrong: 'not an object' }, 'input untouched')
  const defaults = { type: 'object', default: { nested: [1] } } as const satisfies JsonSchema
  const first = applyDefaults(defaults, undefined) as { nested: number[] }
  first.nested.push(2)
  t.same(applyDefaults(defaults, undefined), { nested: [1] }, 'a default is copied, never shared')
})
