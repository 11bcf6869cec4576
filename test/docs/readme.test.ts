import t from 'tap'
import { readFileSync } from 'node:fs'

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')

t.test('the README shows the two commands', async (t) => {
  t.match(readme, /npm ci && npm start/)
  t.match(readme, /npm ci && npm test/)
})

t.test("the README stays a newcomer's page: at most 200 lines, the manual in docs/", async (t) => {
  const lines = readme.split('\n').length
  t.ok(lines <= 200, `${lines} lines`)
})
