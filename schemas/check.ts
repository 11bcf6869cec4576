import type { Static, TSchema } from '@sinclair/typebox'
import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js'

/**
 * Checks values against our schemas with ajv (JSON Schema draft 2020-12), the validator the
 * published files are written for: what the gateway accepts is what an editor or a consumer
 * checking the same file accepts. ajv's errors are turned into problems that name the field by
 * its JSON pointer and say what was expected in plain words (`/listen/port must be <= 65535`).
 */

/** One thing wrong in a value: where, and what was expected. */
export interface SchemaProblem {
  /** JSON pointer of the offending value, e.g. `/networks/eth-1/upstreams/0/kind`; `/` for the root. */
  path: string
  /** What was expected, e.g. `must be one of "full", "archive"`. */
  message: string
}

export type CheckResult<T> = { ok: true; value: T } | { ok: false; problems: SchemaProblem[] }

export interface CheckOptions {
  /** Fill absent properties from their schema's `default`, deeply (in a copy: the input is never changed). */
  defaults?: boolean
}

/**
 * Compile `schema` into a check. Compile once and keep the function: compiling costs
 * milliseconds, a check microseconds.
 *
 * @example
 * const check = compileCheck(configSchema, { defaults: true })
 * const result = check(JSON.parse(text))
 * // { ok: true, value } or { ok: false, problems: [{ path: '/listen/port', message: 'must be integer' }] }
 */
export function compileCheck<T extends TSchema>(schema: T, options: CheckOptions = {}): (value: unknown) => CheckResult<Static<T>> {
  const ajv = new Ajv2020({
    allErrors: true, // every problem of a file at once, not one per attempt
    verbose: true, // errors carry their schema and value, which the messages below need
    strict: true, // a misspelt keyword in our schemas (minLenght) is refused instead of checking nothing
    allowUnionTypes: true, // type: ["integer", "null"]
    useDefaults: options.defaults === true,
    // Startup cost: checking our schema against the draft 2020-12 meta-schema took most of the
    // compile time of every process (test/schemas/generated.test.ts does it once instead), and a
    // check that runs a few times per process does not need optimised code.
    validateSchema: false,
    code: { optimize: false },
  })
  const validate = ajv.compile(schema)
  return (input) => {
    const value = options.defaults === true ? structuredClone(input) : input
    if (validate(value)) return { ok: true, value: value as Static<T> }
    return { ok: false, problems: problemsOf(validate.errors ?? []) }
  }
}

/**
 * ajv's errors as problems. Those of an anyOf/oneOf's alternatives come before the anyOf/oneOf
 * error itself; when the value was evidently meant to be one alternative (its type and every
 * `const`/`enum` property match), that alternative's problems say more than "must match one of",
 * so they are given; otherwise the alternatives are described.
 */
function problemsOf(errors: readonly ErrorObject[]): SchemaProblem[] {
  const composites = errors.filter(isComposite)
  const insideComposite = (e: ErrorObject) => composites.some((c) => c !== e && isUnder(e, c, c.schemaPath))
  const problems: SchemaProblem[] = []
  for (const error of errors) {
    if (insideComposite(error)) continue
    if (isComposite(error)) problems.push(...alternativeProblems(error, errors))
    else if (error.keyword !== 'propertyNames') problems.push(problemOf(error)) // its pattern error names the name
  }
  return problems
}

function alternativeProblems(composite: ErrorObject, errors: readonly ErrorObject[]): SchemaProblem[] {
  const at = composite.instancePath || '/'
  const alternatives = composite.schema as Schema[]
  const passing = (composite.params as { passingSchemas?: number[] | null }).passingSchemas
  if (composite.keyword === 'oneOf' && Array.isArray(passing)) {
    return [{ path: at, message: `must match exactly one of ${alternatives.length} alternatives, matches ${passing.length}` }]
  }
  const candidates = alternatives.flatMap((alternative, i) => (looksMeantFor(alternative, composite.data) ? [i] : []))
  if (candidates.length === 1) {
    const branch = `${composite.schemaPath}/${candidates[0]}`
    return problemsOf(errors.filter((e) => isUnder(e, composite, branch)))
  }
  return [{ path: at, message: `must be ${alternatives.map(describe).join('; or ')}` }]
}

function problemOf(error: ErrorObject): SchemaProblem {
  const params = error.params as Record<string, any>
  const at = error.instancePath || '/'
  const child = (name: string) => `${error.instancePath}/${escapePointer(name)}`
  if (error.propertyName !== undefined) {
    // A property name failed propertyNames: the name is at fault, not its value.
    return { path: child(error.propertyName), message: `name ${problemOf({ ...error, propertyName: undefined }).message}` }
  }
  switch (error.keyword) {
    case 'required':
      return { path: child(params.missingProperty), message: 'is required' }
    case 'additionalProperties':
      return { path: child(params.additionalProperty), message: 'is not allowed (unknown field)' }
    case 'type':
      return { path: at, message: `must be ${[error.schema].flat().join(' or ')}` }
    case 'const':
      return { path: at, message: `must be ${JSON.stringify(params.allowedValue)}` }
    case 'enum':
      return { path: at, message: `must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}` }
    case 'minimum':
    case 'maximum':
      return { path: at, message: `must be ${params.comparison} ${params.limit}` }
    case 'minLength':
      return { path: at, message: params.limit === 1 ? 'must not be empty' : `must be at least ${params.limit} characters` }
    case 'maxLength':
      return { path: at, message: `must be at most ${params.limit} characters` }
    case 'pattern':
      return { path: at, message: `must match ${params.pattern}` }
    case 'minItems':
      return { path: at, message: `must have at least ${params.limit} item${params.limit === 1 ? '' : 's'}` }
    case 'maxItems':
      return { path: at, message: `must have at most ${params.limit} item${params.limit === 1 ? '' : 's'}` }
    default:
      return { path: at, message: error.message ?? `fails ${error.keyword}` }
  }
}

type Schema = { type?: string | string[]; const?: unknown; enum?: unknown[]; items?: Schema; properties?: Record<string, Schema> }

const isComposite = (e: ErrorObject) => e.keyword === 'anyOf' || e.keyword === 'oneOf'

/** Whether `e` was raised inside the subschema at `schemaPath`, for the value of `composite` or one within it. */
function isUnder(e: ErrorObject, composite: ErrorObject, schemaPath: string): boolean {
  const sameOrInside = e.instancePath === composite.instancePath || e.instancePath.startsWith(`${composite.instancePath}/`)
  return sameOrInside && e.schemaPath.startsWith(`${schemaPath}/`)
}

function looksMeantFor(schema: Schema, value: unknown): boolean {
  if (schema.type !== undefined && ![schema.type].flat().some((type) => hasType(value, type))) return false
  if (schema.properties !== undefined && isPlainObject(value)) {
    for (const [name, property] of Object.entries(schema.properties)) {
      if (property.const !== undefined && property.const !== value[name]) return false
      if (property.enum !== undefined && !property.enum.includes(value[name])) return false
    }
  }
  return true
}

function describe(schema: Schema): string {
  if (schema.const !== undefined) return JSON.stringify(schema.const)
  if (schema.enum !== undefined) return `one of ${schema.enum.map((o) => JSON.stringify(o)).join(', ')}`
  const tags = Object.entries(schema.properties ?? {}).filter(([, p]) => p.const !== undefined || p.enum !== undefined)
  if (tags.length > 0) return `an object with ${tags.map(([name, p]) => `${name} ${describe(p)}`).join(' and ')}`
  if (schema.type === 'array' && schema.items?.type !== undefined) return `an array of ${[schema.items.type].flat().join(' or ')}`
  if (schema.type !== undefined) return [schema.type].flat().join(' or ')
  return 'the alternative'
}

function hasType(value: unknown, type: string): boolean {
  switch (type) {
    case 'integer':
      return Number.isInteger(value)
    case 'null':
      return value === null
    case 'array':
      return Array.isArray(value)
    case 'object':
      return isPlainObject(value)
    default:
      return typeof value === type
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** JSON pointer escaping (RFC 6901), as ajv's instancePath has it: a `/` inside a name must not read as a path step. */
function escapePointer(name: string): string {
  return name.replace(/~/g, '~0').replace(/\//g, '~1')
}
