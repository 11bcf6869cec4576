import t from 'tap'
import { readFileSync } from 'node:fs'
import { Unpackr, unpack } from 'msgpackr'
import { encodeEvent } from '../../src/events/codec.js'
import { makeEvent } from '../../src/events/make-event.js'

// Two things a newcomer met without a word from the docs: `npm test` needs nginx (the fleet tests
// start their own), and msgpackr decodes the events' 64-bit integers as BigInt unless told otherwise.

const doc = (path: string): string => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8')

t.test('the README and docs/development.md say that npm test needs nginx', async (t) => {
  const readme = doc('README.md')
  const twoCommands = readme.slice(readme.indexOf('## Two commands'), readme.indexOf('## From a client'))
  t.match(twoCommands, /`npm test` needs[^.]*nginx/, "the README's test section")
  const development = doc('docs/development.md')
  t.match(development, /apt-get install nginx-light/, 'docs/development.md names the package')
  for (const binary of ['nats-server', 'nginx', 'chromium']) t.match(development, new RegExp(`/usr/s?bin/${binary}|\\b${binary}\\b`), binary)
})

t.test("docs/events.md shows a JavaScript decoder that reads the events' integers as numbers", async (t) => {
  const events = doc('docs/events.md')
  const section = events.slice(events.indexOf('**In JavaScript**'))
  const options = /new Unpackr\((\{[^)]*\})\)/.exec(section)?.[1]
  t.ok(events.includes('**In JavaScript**') && options, 'an "In JavaScript" part with the Unpackr it takes')
  const event = makeEvent(
    { type: 'KeyRevoked', accountId: 'acc_0123456789abcdef', keyId: 'key_0123456789abcdef', reason: 'revoked', effectiveAt: 1_795_531_220_076 },
    1_795_531_220_076,
  )
  const bytes = encodeEvent(event)
  t.equal(typeof (unpack(bytes) as { time: unknown }).time, 'bigint', "msgpackr's defaults read the time as a BigInt: the advice is needed")
  // The options as the page writes them (an object literal), applied to an event as the gateway encodes it.
  const decoded = new Unpackr(new Function(`return ${options ?? '{}'}`)()).unpack(bytes) as Record<string, unknown>
  t.notOk(decoded instanceof Map, 'a plain object')
  t.equal(decoded.time, event.time, 'the time is a number, exact')
  t.doesNotThrow(() => JSON.stringify(decoded), 'and the event prints as JSON')
})
