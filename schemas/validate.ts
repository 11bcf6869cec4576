/**
 * A small JSON Schema validator for the subset our schemas use, so that configuration and
 * plan catalogs are checked by the same schema files we publish, without adding ajv.
 *
 * Keywords: type (a name or a list), properties, required, additionalProperties (boolean or
 * schema), propertyNames, items, enum, const, minimum, maximum, minLength, maxLength, pattern,
 * minItems, maxItems, anyOf, oneOf, default. Annotations ($schema, $id, title, description)
 * are ignored. Any other keyword is a mistake in our schema and throws.
 */

export type JsonType = 'string' | 'number' | 'integer' | 'boolean' | 'object' | 'array' | 'null'

export interface JsonSchema {
  $schema?: string
  $id?: string
  title?: string
  description?: string
  type?: JsonType | readonly JsonType[]
  properties?: { readonly [name: string]: JsonSchema }
  required?: readonly string[]
  additionalProperties?: boolean | JsonSchema
  propertyNames?: JsonSchema
  items?: JsonSchema
  enum?: readonly unknown[]
  const?: unknown
  minimum?: number
  maximum?: number
  minLength?: number
  maxLength?: number
  pattern?: string
  minItems?: number
  maxItems?: number
  anyOf?: readonly JsonSchema[]
  oneOf?: readonly JsonSchema[]
  default?: unknown
}

export interface ValidationError {
  /** JSON pointer of the offending value, e.g. `/networks/eth-1/upstreams/0/kind`; `/` for the root. */
  path: string
  /** What was expected, e.g. `must be one of "full", "archive"`. */
  message: string
}

export type ValidationResult = { ok: true } | { ok: false; errors: ValidationError[] }

const KNOWN = new Set([
  '$schema', '$id', 'title', 'description', 'type', 'properties', 'required', 'additionalProperties',
  'propertyNames', 'items', 'enum', 'const', 'minimum', 'maximum', 'minLength', 'maxLength', 'pattern',
  'minItems', 'maxItems', 'anyOf', 'oneOf', 'default', 'examples',
])

/**
 * Check `value` against `schema`.
 *
 * @example
 * validate({ type: 'object', required: ['port'] }, {}) // { ok: false, errors: [{ path: '/port', message: 'is required' }] }
 */
export function validate(schema: JsonSchema, value: unknown): ValidationResult {
  const errors: ValidationError[] = []
  check(schema, value, '', errors)
  return errors.length === 0 ? { ok: true } : { ok: false, errors }
}

function check(schema: JsonSchema, value: unknown, path: string, errors: ValidationError[]): void {
  for (const keyword of Object.keys(schema)) {
    // A misspelt keyword (minLenght) would silently check nothing.
    if (!KNOWN.has(keyword)) throw new TypeError(`unsupported JSON Schema keyword "${keyword}" at ${path || '/'}`)
  }
  const at = path || '/'
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type]
    if (!types.some((type) => hasType(value, type))) {
      errors.push({ path: at, message: `must be ${types.join(' or ')}` })
      return // the other keywords would only repeat the same mistake
    }
  }
  if (schema.const !== undefined && !deepEqual(schema.const, value)) {
    errors.push({ path: at, message: `must be ${JSON.stringify(schema.const)}` })
  }
  if (schema.enum !== undefined && !schema.enum.some((option) => deepEqual(option, value))) {
    errors.push({ path: at, message: `must be one of ${schema.enum.map((o) => JSON.stringify(o)).join(', ')}` })
  }
  if (typeof value === 'number') checkNumber(schema, value, at, errors)
  if (typeof value === 'string') checkString(schema, value, at, errors)
  if (Array.isArray(value)) checkArray(schema, value, path, errors)
  else if (isPlainObject(value)) checkObject(schema, value, path, errors)
  if (schema.anyOf !== undefined) checkAlternatives(schema.anyOf, value, path, errors, 'any')
  if (schema.oneOf !== undefined) checkAlternatives(schema.oneOf, value, path, errors, 'one')
}

function checkNumber(schema: JsonSchema, value: number, at: string, errors: ValidationError[]): void {
  if (schema.minimum !== undefined && value < schema.minimum) errors.push({ path: at, message: `must be >= ${schema.minimum}` })
  if (schema.maximum !== undefined && value > schema.maximum) errors.push({ path: at, message: `must be <= ${schema.maximum}` })
}

function checkString(schema: JsonSchema, value: string, at: string, errors: ValidationError[]): void {
  const length = [...value].length // code points, as JSON Schema counts
  if (schema.minLength !== undefined && length < schema.minLength) {
    errors.push({ path: at, message: schema.minLength === 1 ? 'must not be empty' : `must be at least ${schema.minLength} characters` })
  }
  if (schema.maxLength !== undefined && length > schema.maxLength) {
    errors.push({ path: at, message: `must be at most ${schema.maxLength} characters` })
  }
  if (schema.pattern !== undefined && !patternOf(schema.pattern).test(value)) {
    errors.push({ path: at, message: `must match ${schema.pattern}` })
  }
}

function checkArray(schema: JsonSchema, value: unknown[], path: string, errors: ValidationError[]): void {
  const at = path || '/'
  if (schema.minItems !== undefined && value.length < schema.minItems) {
    errors.push({ path: at, message: `must have at least ${schema.minItems} item${schema.minItems === 1 ? '' : 's'}` })
  }
  if (schema.maxItems !== undefined && value.length > schema.maxItems) {
    errors.push({ path: at, message: `must have at most ${schema.maxItems} item${schema.maxItems === 1 ? '' : 's'}` })
  }
  if (schema.items !== undefined) value.forEach((item, i) => check(schema.items!, item, `${path}/${i}`, errors))
}

function checkObject(schema: JsonSchema, value: Record<string, unknown>, path: string, errors: ValidationError[]): void {
  for (const name of schema.required ?? []) {
    if (value[name] === undefined) errors.push({ path: `${path}/${escape(name)}`, message: 'is required' })
  }
  for (const [name, child] of Object.entries(value)) {
    const childPath = `${path}/${escape(name)}`
    if (schema.propertyNames !== undefined) {
      const nameErrors: ValidationError[] = []
      check(schema.propertyNames, name, childPath, nameErrors)
      for (const e of nameErrors) errors.push({ path: childPath, message: `name ${e.message}` })
    }
    const known = schema.properties?.[name]
    if (known !== undefined) {
      if (child !== undefined) check(known, child, childPath, errors)
    } else if (schema.additionalProperties === false) {
      errors.push({ path: childPath, message: 'is not allowed (unknown field)' })
    } else if (typeof schema.additionalProperties === 'object') {
      check(schema.additionalProperties, child, childPath, errors)
    }
  }
}

/**
 * anyOf / oneOf. When the value fails, the errors of the one alternative it was evidently
 * meant to be (its type, and every `const`/`enum` property, match) are more useful than
 * "must match one of"; without such a single candidate the generic message is given.
 */
function checkAlternatives(
  alternatives: readonly JsonSchema[],
  value: unknown,
  path: string,
  errors: ValidationError[],
  mode: 'any' | 'one',
): void {
  const results = alternatives.map((alternative) => validate(alternative, value))
  const passed = results.filter((r) => r.ok).length
  if (mode === 'any' ? passed >= 1 : passed === 1) return
  const at = path || '/'
  if (passed > 1) {
    errors.push({ path: at, message: `must match exactly one of ${alternatives.length} alternatives, matches ${passed}` })
    return
  }
  const candidates = alternatives.map((a, i) => ({ a, i })).filter(({ a }) => looksMeantFor(a, value))
  if (candidates.length === 1) {
    const result = results[candidates[0].i]
    if (!result.ok) for (const e of result.errors) errors.push({ path: path + (e.path === '/' ? '' : e.path) || '/', message: e.message })
    return
  }
  const described = alternatives.map(describe).join('; or ')
  errors.push({ path: at, message: `must be ${described}` })
}

function looksMeantFor(schema: JsonSchema, value: unknown): boolean {
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type]
    if (!types.some((type) => hasType(value, type))) return false
  }
  if (schema.properties !== undefined && isPlainObject(value)) {
    for (const [name, property] of Object.entries(schema.properties)) {
      if (property.const !== undefined && !deepEqual(property.const, value[name])) return false
      if (property.enum !== undefined && !property.enum.some((o) => deepEqual(o, value[name]))) return false
    }
  }
  return true
}

function describe(schema: JsonSchema): string {
  if (schema.const !== undefined) return JSON.stringify(schema.const)
  if (schema.enum !== undefined) return `one of ${schema.enum.map((o) => JSON.stringify(o)).join(', ')}`
  if (schema.type === 'array' && schema.items?.type !== undefined) return `an array of ${[schema.items.type].flat().join(' or ')}`
  if (schema.type !== undefined) return [schema.type].flat().join(' or ')
  return 'the alternative'
}

/**
 * A copy of `value` with every absent property that has a `default` filled in, deeply:
 * through properties, additionalProperties and items, and into defaults themselves (an
 * absent `limits` with `default: {}` gets its own fields' defaults). Values of the wrong
 * type are left alone for `validate` to report. anyOf/oneOf are not entered: which
 * alternative's defaults apply is ambiguous.
 *
 * @example
 * applyDefaults({ type: 'object', properties: { port: { type: 'integer', default: 8080 } } }, {}) // { port: 8080 }
 */
export function applyDefaults(schema: JsonSchema, value: unknown): unknown {
  const filled = value === undefined && schema.default !== undefined ? clone(schema.default) : value
  if (Array.isArray(filled)) {
    return filled.map((item) => (schema.items !== undefined ? applyDefaults(schema.items, item) : clone(item)))
  }
  if (!isPlainObject(filled)) return filled
  const out: Record<string, unknown> = {}
  for (const [name, child] of Object.entries(filled)) {
    const childSchema = schema.properties?.[name] ?? (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined)
    out[name] = childSchema !== undefined ? applyDefaults(childSchema, child) : clone(child)
  }
  for (const [name, childSchema] of Object.entries(schema.properties ?? {})) {
    if (out[name] === undefined && childSchema.default !== undefined) out[name] = applyDefaults(childSchema, undefined)
  }
  return out
}

function hasType(value: unknown, type: JsonType): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string'
    case 'number':
      return typeof value === 'number' && Number.isFinite(value)
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value)
    case 'boolean':
      return typeof value === 'boolean'
    case 'null':
      return value === null
    case 'array':
      return Array.isArray(value)
    case 'object':
      return isPlainObject(value)
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]))
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = Object.keys(a)
    return keys.length === Object.keys(b).length && keys.every((k) => deepEqual(a[k], b[k]))
  }
  return false
}

function clone<T>(value: T): T {
  if (Array.isArray(value)) return value.map(clone) as T
  if (isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, clone(v)])) as T
  return value
}

/** JSON pointer escaping (RFC 6901): a `/` inside a name must not read as a path step. */
function escape(name: string): string {
  return name.replace(/~/g, '~0').replace(/\//g, '~1')
}

const patterns = new Map<string, RegExp>()
function patternOf(source: string): RegExp {
  let re = patterns.get(source)
  if (re === undefined) {
    re = new RegExp(source, 'u')
    patterns.set(source, re)
  }
  return re
}
