import t from 'tap'
import { Type } from '@sinclair/typebox'
import { compileCheck } from '../../schemas/check.js'
import { MapOf, Nullable, Strict, StringEnum } from '../../schemas/json-schema.js'

const problems = (check: (value: unknown) => { ok: boolean }, value: unknown) => {
  const result = check(value) as { ok: boolean; problems?: unknown }
  return result.ok ? 'accepted' : result.problems
}

t.test('type lists, const, enum, maxItems, maxLength, non-finite numbers', async (t) => {
  const nullable = compileCheck(Nullable(Type.Integer()))
  t.same(nullable(null), { ok: true, value: null })
  t.same(problems(nullable, 1.5), [{ path: '/', message: 'must be integer or null' }])
  t.same(problems(compileCheck(Type.Literal('a')), 'b'), [{ path: '/', message: 'must be "a"' }])
  t.same(problems(compileCheck(StringEnum(['x', 'y'])), 'z'), [{ path: '/', message: 'must be one of "x", "y"' }])
  t.same(problems(compileCheck(Type.Array(Type.Integer(), { maxItems: 1 })), [1, 2]), [{ path: '/', message: 'must have at most 1 item' }])
  t.same(problems(compileCheck(Type.String({ maxLength: 2 })), 'abc'), [{ path: '/', message: 'must be at most 2 characters' }])
  t.same(problems(compileCheck(Type.Number()), Number.NaN), [{ path: '/', message: 'must be number' }])
})

t.test('paths are JSON pointers, with / and ~ in names escaped', async (t) => {
  const check = compileCheck(Type.Record(Type.String(), Strict({ n: Type.Integer() })))
  t.same(problems(check, { 'a/b~c': { n: 'x' } }), [{ path: '/a~1b~0c/n', message: 'must be integer' }])
  t.same(problems(check, { 'a/b': {} }), [{ path: '/a~1b/n', message: 'is required' }])
  t.same(problems(check, { k: { n: 1, 'x/y': 2 } }), [{ path: '/k/x~1y', message: 'is not allowed (unknown field)' }])
  t.same(problems(compileCheck(MapOf('^[a-z]+$', Type.Integer())), { Ab: 1 }), [{ path: '/Ab', message: 'name must match ^[a-z]+$' }])
})

t.test('oneOf: exactly one alternative', async (t) => {
  const check = compileCheck(Type.Unsafe<number>({ oneOf: [Type.Integer(), Type.Number()] }))
  t.same(check(1.5), { ok: true, value: 1.5 })
  t.same(problems(check, 2), [{ path: '/', message: 'must match exactly one of 2 alternatives, matches 2' }])
})

t.test('anyOf: the alternative the value was evidently meant for speaks; else the alternatives are named', async (t) => {
  const check = compileCheck(Type.Union([Strict({ kind: Type.Literal('a'), size: Type.Integer() }), Strict({ kind: Type.Literal('b'), name: Type.String() })]))
  t.same(problems(check, { kind: 'b', name: 1 }), [{ path: '/name', message: 'must be string' }], 'only the "b" alternative')
  t.same(problems(check, { kind: 'c' }), [{ path: '/', message: 'must be an object with kind "a"; or an object with kind "b"' }])
  const scalars = compileCheck(Type.Union([Type.String(), Type.Array(Type.String())]))
  t.same(problems(scalars, 4), [{ path: '/', message: 'must be string; or an array of string' }])
})

t.test('a misspelt schema keyword is refused, not ignored', async (t) => {
  t.throws(() => compileCheck(Type.Unsafe<string>({ type: 'string', minLenght: 1 })), /unknown keyword: "minLenght"/)
})

t.test('defaults: deep, through items and maps, copied, never into the input', async (t) => {
  const schema = Type.Object({
    a: Type.Object({ b: Type.Integer({ default: 1 }) }, { default: {} }),
    list: Type.Array(Type.Object({ c: Type.String({ default: 'x' }) })),
    map: MapOf('^[a-z]+$', Type.Object({ d: Type.Boolean({ default: true }) })),
    nested: Type.Object({ items: Type.Array(Type.Integer()) }, { default: { items: [1] } }),
  })
  const check = compileCheck(schema, { defaults: true })
  const input = { list: [{}, { c: 'y' }], map: { k: {} } }
  const first = check(input)
  t.same(first, { ok: true, value: { a: { b: 1 }, list: [{ c: 'x' }, { c: 'y' }], map: { k: { d: true } }, nested: { items: [1] } } })
  t.same(input, { list: [{}, { c: 'y' }], map: { k: {} } }, 'input untouched')
  if (first.ok) first.value.nested.items.push(2)
  const second = check({ list: [], map: {} })
  t.same(second.ok && second.value.nested, { items: [1] }, 'a default is copied, never shared')
  const problemsWithoutDefaults = [
    { path: '/a', message: 'is required' },
    { path: '/nested', message: 'is required' },
  ]
  t.same(compileCheck(schema)({ list: [], map: {} }), { ok: false, problems: problemsWithoutDefaults }, 'off unless asked')
})
