import { configSchema } from './config.js'
import { toPublished } from './json-schema.js'

/**
 * The reference table of the configuration file in docs/configuration.md: one row per field
 * (a section's own row when it says what it is for), with its type, its default and its
 * description, all read from schemas/config.ts. `npm run docs` writes it between the page's
 * markers and a test checks that the page holds what this renders, so the page cannot state a
 * default the code does not have.
 *
 * @example
 * renderConfigTable().split('\n')[0] // '| field | type | default | description |'
 */
export function renderConfigTable(schema: unknown = configSchema): string {
  const rows = ['| field | type | default | description |', '|---|---|---|---|']
  for (const field of fieldsOf(toPublished(schema) as Node)) {
    rows.push(`| \`${field.path}\` | ${cell(field.type)} | ${cell(field.default)} | ${cell(field.description)} |`)
  }
  return rows.join('\n')
}

/** A JSON Schema node, as far as this table reads one. */
interface Node {
  type?: string | string[]
  const?: unknown
  enum?: unknown[]
  minimum?: number
  maximum?: number
  default?: unknown
  description?: string
  anyOf?: Node[]
  items?: Node
  properties?: Record<string, Node>
  required?: string[]
  propertyNames?: { pattern?: string }
  additionalProperties?: Node | boolean
}

interface Field {
  path: string
  type: string
  default: string
  description: string
}

/** What a map's keys are, in the paths of the fields of its values (`networks.<slug>.chainId`). */
const MAP_KEY_NAMES: Record<string, string> = { networks: '<slug>' }

/**
 * The rows of `node` and of its fields, depth first in the schema's order: a value, or an object
 * that has a description, is a row; an object's fields are rows of their own.
 */
function* fieldsOf(node: Node, path = '', required = false): Generator<Field> {
  if (path !== '' && (isLeaf(node) || node.description !== undefined)) {
    yield { path, type: typeOf(node), default: defaultOf(node, required), description: node.description ?? '' }
  }
  // The fields inside: an object's own, those of each value of a map of objects, or of each item of an array of objects.
  const map = mapValue(node)
  const [inner, prefix]: [Node, string] =
    map !== undefined && !isLeaf(map)
      ? [map, `${path}.${MAP_KEY_NAMES[path] ?? '<name>'}`]
      : node.type === 'array' && node.items !== undefined && !isLeaf(node.items)
        ? [node.items, `${path}[]`]
        : [node, path]
  for (const [name, child] of Object.entries(inner.properties ?? {})) {
    yield* fieldsOf(child, prefix === '' ? name : `${prefix}.${name}`, inner.required?.includes(name) ?? false)
  }
}

/** The value schema of a map (an object whose keys are names: `propertyNames`), else undefined. */
function mapValue(node: Node): Node | undefined {
  return node.propertyNames !== undefined && typeof node.additionalProperties === 'object' ? node.additionalProperties : undefined
}

/** A value with no fields of its own (a map or an array of such values too): it takes one row. */
function isLeaf(node: Node): boolean {
  const map = mapValue(node)
  const items = node.type === 'array' ? node.items : undefined
  return node.properties === undefined && (map === undefined || isLeaf(map)) && (items === undefined || isLeaf(items))
}

function typeOf(node: Node): string {
  if (node.anyOf !== undefined) return node.anyOf.map(typeOf).join(' or ')
  if (node.const !== undefined) return JSON.stringify(node.const)
  if (node.enum !== undefined) return node.enum.map((value) => JSON.stringify(value)).join(' or ')
  const map = mapValue(node)
  if (map !== undefined) return isLeaf(map) ? `object of ${typeOf(map)}` : 'object'
  if (node.type === 'array') return node.items === undefined ? 'array' : `array of ${typeOf(node.items)}`
  const type = Array.isArray(node.type) ? node.type.join(' or ') : (node.type ?? 'any')
  const { minimum: min, maximum: max } = node
  if (min !== undefined && max !== undefined) return `${type} ${min} to ${max}`
  if (min !== undefined) return `${type} ≥ ${min}`
  if (max !== undefined) return `${type} ≤ ${max}`
  return type
}

/** The default as it would be written in the file; an object section's `{}` (its fields have theirs) is left out. */
function defaultOf(node: Node, required: boolean): string {
  if (node.default === undefined) return required ? 'required' : ''
  if (node.properties !== undefined && JSON.stringify(node.default) === '{}') return ''
  return `\`${JSON.stringify(node.default)}\``
}

/**
 * A table cell: `|` escaped (also in code spans: GitHub splits the row before it reads them) and,
 * outside code spans, `<` escaped, so that a placeholder such as <id> is shown, not taken for HTML.
 */
function cell(text: string): string {
  return text
    .split(/(`[^`]*`)/)
    .map((part, i) => (i % 2 === 1 ? part : part.replaceAll('<', '\\<')).replaceAll('|', '\\|'))
    .join('')
}
