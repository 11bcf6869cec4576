import { Type, type ObjectOptions, type SchemaOptions, type Static, type TProperties, type TSchema } from '@sinclair/typebox'

/**
 * Builders for the schemas in this folder. Each schema is declared once, with TypeBox: the object
 * is the JSON Schema we publish and validate with (schemas/check.ts), and `Static<typeof schema>`
 * is its TypeScript type. These builders keep the published form what consumers expect: one
 * `enum` rather than an anyOf of consts, `type: ["integer", "null"]` rather than an anyOf.
 */

/** An object that refuses unknown fields: a misspelt field in a file must not be silently ignored. */
export function Strict<P extends TProperties>(properties: P, options: ObjectOptions = {}) {
  return Type.Object(properties, { ...options, additionalProperties: false })
}

/** One of a few strings, published as `{ "enum": [...] }`. */
export function StringEnum<const T extends readonly string[]>(values: T, options: SchemaOptions = {}) {
  return Type.Unsafe<T[number]>({ enum: values, ...options })
}

/** The schema's value or null, published as `type: [<type>, "null"]` beside the schema's other keywords. */
export function Nullable<T extends TSchema & { type: string }>(schema: T) {
  const { type, ...rest } = schema
  return Type.Unsafe<Static<T> | null>({ type: [type, 'null'], ...rest })
}

/**
 * A map whose keys are names matching `namePattern` (network slugs, method names), each value
 * checked by `value`. Published as `propertyNames` + `additionalProperties`, so that a bad name is
 * reported as such (`name must match ...`), not as an unknown field.
 */
export function MapOf<T extends TSchema>(namePattern: string, value: T, options: SchemaOptions = {}) {
  return Type.Unsafe<Record<string, Static<T>>>({
    type: 'object',
    ...options,
    propertyNames: { pattern: namePattern },
    additionalProperties: value,
  })
}

/**
 * The schema of a file whose absent fields take their `default`: a property that has a default
 * is taken out of its object's `required`, in place. Declare such properties as required (not
 * `Type.Optional`): the TypeScript type then describes the value after defaults are filled in,
 * where they are always present, while the published schema lets a file leave them out.
 */
export function withDefaultsOptional<T extends TSchema>(schema: T): T {
  visit(schema, (node) => {
    const properties = node.properties as Record<string, { default?: unknown }> | undefined
    if (Array.isArray(node.required) && properties !== undefined) {
      const required = node.required.filter((name: string) => properties[name]?.default === undefined)
      if (required.length > 0) node.required = required
      else delete node.required
    }
  })
  return schema
}

/** The defaults of an object schema's properties, e.g. `{ port: 8080 }` of `{ port: { default: 8080 } }`. */
export function defaultsOf(schema: { properties: Record<string, { default?: unknown }> }): Record<string, unknown> {
  const withDefault = Object.entries(schema.properties).filter(([, property]) => property.default !== undefined)
  return Object.fromEntries(withDefault.map(([name, property]) => [name, structuredClone(property.default)]))
}

/** Call `fn` on every subschema of `schema` (itself included), depth first. */
function visit(schema: unknown, fn: (node: Record<string, any>) => void): void {
  if (typeof schema !== 'object' || schema === null) return
  if (Array.isArray(schema)) {
    for (const item of schema) visit(item, fn)
    return
  }
  const node = schema as Record<string, any>
  fn(node)
  for (const keyword of ['items', 'additionalProperties', 'propertyNames']) visit(node[keyword], fn)
  for (const keyword of ['anyOf', 'oneOf']) visit(node[keyword], fn)
  if (node.properties !== undefined) for (const child of Object.values(node.properties)) visit(child, fn)
}

/**
 * The order keywords are written in the published files (TypeBox puts its options first): the
 * type, the constraints on the value, the description, then the members of objects and arrays. A
 * value's default sits beside its constraints, an object's after its members, as the files had
 * them when they were written by hand, so that their diffs stay small and readable.
 */
const LEAF_ORDER = [
  '$schema',
  '$id',
  'title',
  'type',
  'const',
  'enum',
  'pattern',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'minItems',
  'maxItems',
  'default',
  'description',
  'anyOf',
  'oneOf',
  'items',
  'propertyNames',
  'properties',
  'required',
  'additionalProperties',
]
const OBJECT_ORDER = [...LEAF_ORDER.filter((k) => k !== 'default'), 'default']

/** `schema` as plain JSON (TypeBox's symbol keys dropped) with its keywords in that order. */
export function toPublished(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toPublished)
  if (typeof schema !== 'object' || schema === null) return schema
  const order = (schema as { type?: unknown }).type === 'object' ? OBJECT_ORDER : LEAF_ORDER
  const titled = 'title' in schema // a titled (top-level) schema is described before its type
  const rank = (keyword: string) =>
    titled && keyword === 'description' ? order.indexOf('title') + 0.5 : order.includes(keyword) ? order.indexOf(keyword) : order.length
  const published = (keyword: string, value: unknown): unknown => {
    if (keyword === 'properties') {
      return Object.fromEntries(Object.entries(value as object).map(([name, child]) => [name, toPublished(child)]))
    }
    return keyword === 'const' || keyword === 'enum' || keyword === 'default' ? value : toPublished(value)
  }
  return Object.fromEntries(
    Object.entries(schema)
      .sort(([a], [b]) => rank(a) - rank(b))
      .map(([keyword, value]) => [keyword, published(keyword, value)]),
  )
}
