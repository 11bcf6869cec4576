import t from 'tap'
import { readFileSync } from 'node:fs'
import { configSchema } from '../../schemas/config.js'
import { parseConfig } from '../../src/config/load.js'

const read = (page: string) => readFileSync(new URL(`../../docs/${page}`, import.meta.url), 'utf8')

/** Every field of a section with a number as its default, by its path in the section (`ipThrottle.windowMs`). */
function numberDefaults(section: { properties: Record<string, any> }, path = ''): [string, number][] {
  return Object.entries(section.properties).flatMap(([name, field]): [string, number][] => {
    const at = path === '' ? name : `${path}.${name}`
    if (field.properties !== undefined) return numberDefaults(field, at)
    return typeof field.default === 'number' ? [[at, field.default]] : []
  })
}

/** The ways a page may write a default: as it is, or in the unit a reader takes in (`60 s`, `5-minute`, `1 MiB`, `10%`). */
function writtenAs(name: string, value: number): string[] {
  const forms = [String(value)]
  if (/Ms$/.test(name) && value % 1000 === 0) forms.push(`${value / 1000} s`)
  if (/Ms$/.test(name) && value % 60_000 === 0) {
    const minutes = value / 60_000
    forms.push(`${minutes} min`, `${minutes}-minute`, ...(minutes === 1 ? ['per minute', 'a minute'] : []))
  }
  if (/Sec$/.test(name)) forms.push(`${value} s`)
  if (/Bytes$/.test(name) && value % 1024 ** 2 === 0) forms.push(`${value / 1024 ** 2} MiB`)
  if (value > 0 && value < 1) forms.push(`${Math.round(value * 100)}%`)
  return forms
}

/** Whether a line of `page` names the field (its last name, in backticks) and its default. */
function statesDefault(page: string, path: string, value: number): boolean {
  const name = path.split('.').at(-1) as string
  const field = new RegExp(`\`(?:[\\w.]+\\.)?${name}\``)
  const forms = writtenAs(name, value).map((form) => new RegExp(`(?<![\\w.,])${form.replace(/[.%]/g, '\\$&')}(?![\\d,])`))
  return page.split('\n').some((line) => field.test(line) && forms.some((form) => form.test(line)))
}

t.test('every default of `limits` is stated in docs/http.md', async (t) => {
  const page = read('http.md')
  const defaults = numberDefaults(configSchema.properties.limits as any)
  t.ok(defaults.length >= 10, `${defaults.length} defaults`)
  for (const [path, value] of defaults) t.ok(statesDefault(page, path, value), `${path}: ${value}`)
})

t.test('every default of `ws` is stated in docs/websocket.md', async (t) => {
  const page = read('websocket.md')
  const defaults = numberDefaults(configSchema.properties.ws as any)
  t.ok(defaults.length >= 12, `${defaults.length} defaults`)
  for (const [path, value] of defaults) t.ok(statesDefault(page, path, value), `${path}: ${value}`)
})

t.test('a default is found only beside its own field and in its own value', async (t) => {
  t.ok(statesDefault('| calls | 100 (`maxBatch`) |', 'maxBatch', 100))
  t.ok(statesDefault('a cooldown of 60 s (`cooldownMs`)', 'cooldownMs', 60000))
  t.ok(statesDefault('a 5-minute penalty (`penaltyMs`)', 'penaltyMs', 300000))
  t.ok(statesDefault('(`ipThrottle.windowMs`: 10000)', 'ipThrottle.windowMs', 10000))
  t.notOk(statesDefault('| calls | 1000 (`maxBatch`) |', 'maxBatch', 100), 'another number')
  t.notOk(statesDefault('| calls | 100 (`maxBatchSize`) |', 'maxBatch', 100), 'another field')
  t.notOk(statesDefault('`maxBatch`:\n100', 'maxBatch', 100), 'on another line')
})

t.test('the example of docs/configuration.md is a valid configuration that states the defaults', async (t) => {
  const example = /^```json\n([\s\S]*?)\n```$/m.exec(read('configuration.md'))?.[1]
  t.ok(example, 'docs/configuration.md opens with a JSON example')
  const config = parseConfig(JSON.parse(example ?? '{}'), 'the example')
  const defaults = parseConfig({ networks: config.networks })
  const given = JSON.parse(example ?? '{}') as { limits: Record<string, unknown>; ws: Record<string, unknown> }
  for (const section of ['limits', 'ws'] as const) {
    for (const name of Object.keys(given[section])) {
      t.equal(config[section][name as never], defaults[section][name as never], `${section}.${name}`)
    }
  }
})
