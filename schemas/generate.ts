/**
 * Writes the JSON Schema files other tools and languages read, from the TypeBox schemas:
 * schemas/config.schema.json, schemas/plan-catalog.schema.json and schemas/events/<Type>.schema.json.
 * Run with `npm run schemas`; a test checks the committed files equal what this would write, so
 * they cannot drift from the code.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { configSchema } from './config.js'
import { eventSchemas } from './events.js'
import { toPublished } from './json-schema.js'
import { planCatalogSchema } from './plans.js'

const SCHEMAS_DIR = dirname(fileURLToPath(import.meta.url))

/** The file format: the schema as plain JSON (see toPublished), 2-space indented, a final newline, as editors save it. */
function toJsonFile(schema: unknown): string {
  return JSON.stringify(toPublished(schema), null, 2) + '\n'
}

/** Every generated file: its path relative to schemas/ and its content. */
export async function generatedSchemaFiles(): Promise<Map<string, string>> {
  const files = new Map<string, string>([
    ['config.schema.json', toJsonFile(configSchema)],
    ['plan-catalog.schema.json', toJsonFile(planCatalogSchema)],
  ])
  for (const [type, schema] of Object.entries(eventSchemas)) {
    files.set(`events/${type}.schema.json`, toJsonFile(schema))
  }
  return files
}

/** Write every generated file under `dir` (schemas/ by default); returns the paths written. */
async function writeSchemaFiles(dir = SCHEMAS_DIR): Promise<string[]> {
  const written: string[] = []
  for (const [relative, content] of await generatedSchemaFiles()) {
    const path = join(dir, relative)
    mkdirSync(dirname(path), { recursive: true })
    writeFileSync(path, content)
    written.push(path)
  }
  return written
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const written = await writeSchemaFiles()
  for (const path of written) console.log(`wrote ${path}`)
}
