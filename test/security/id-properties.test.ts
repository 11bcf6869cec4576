import t from 'tap'
import fc from 'fast-check'
import { anvilGateway } from '../helpers/anvil-gateway.js'
import { MAX_ID_LENGTH, isInvalid, parseRpcBytes, type ParsedBody, type RpcEntry } from '../../src/rpc/parse.js'
import { errorResponseJson } from '../../src/errors/registry.js'

// Properties over ids, batches and bodies: the id comes back as the bytes sent, parsing never
// throws, and every answer is JSON. First on the parser itself (many runs), then through a real
// gateway to a real anvil (fewer runs, each a real call).

/** A JSON number as text: big, signed, fractional, with exponents; JSON.parse alone would lose most of them. */
const numberToken = fc.stringMatching(/^-?(0|[1-9][0-9]{0,30})(\.[0-9]{1,12})?([eE][+-]?[0-9]{1,3})?$/)
/** A JSON string as text: raw characters and every kind of escape, lone surrogates included. */
const stringToken = fc
  .array(
    fc.oneof(
      fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }).filter((c) => c !== '"' && c !== '\\' && c.charCodeAt(0) >= 0x20),
      fc.integer({ min: 0, max: 0xffff }).map((u) => `\\u${u.toString(16).padStart(4, '0')}`),
      fc.constantFrom('\\"', '\\\\', '\\/', '\\b', '\\f', '\\n', '\\r', '\\t'),
    ),
    { maxLength: 40 },
  )
  .map((parts) => `"${parts.join('')}"`)
const idToken = fc.oneof(numberToken, stringToken, fc.constant('null'))
/** Where the id sits in a request, as clients write them (and as attackers might). */
const layout = fc.constantFrom(
  (id: string) => `{"jsonrpc":"2.0","id":${id},"method":"eth_chainId","params":[]}`,
  (id: string) => `{"method":"eth_chainId","params":[],"id":${id},"jsonrpc":"2.0"}`,
  (id: string) => `{"method":"eth_chainId","params":[],"jsonrpc":"2.0","id":${id}}`,
  (id: string) => ` {\n "params" : [ ] ,\t"id" : ${id} , "jsonrpc":"2.0","method":"eth_chainId" } `,
  (id: string) => `{"jsonrpc":"2.0","id":"decoy","method":"eth_chainId","extra":{"id":1,"s":"}\\""},"params":[],"id":${id}}`,
  (id: string) => `{"jsonrpc":"2.0","\\u0069d":${id},"method":"eth_chainId","params":[]}`,
)
const call = fc.tuple(idToken, layout).map(([id, write]) => ({ id, text: write(id) }))

/** What a call with this id token is answered with: the token, or null past the length limit. */
const expectedId = (token: string): string => (token.length <= MAX_ID_LENGTH ? token : 'null')

function entriesOf(parsed: ParsedBody): RpcEntry[] {
  if (parsed.kind === 'single') return [parsed.entry]
  if (parsed.kind === 'batch') return parsed.entries
  return []
}

t.test('the parser keeps every id as its text, alone or in a batch', async (t) => {
  fc.assert(
    fc.property(fc.array(call, { minLength: 1, maxLength: 8 }), fc.boolean(), (calls, asBatch) => {
      const single = !asBatch && calls.length === 1
      const body = single ? calls[0].text : `[${calls.map((c) => c.text).join(',')}]`
      const entries = entriesOf(parseRpcBytes(Buffer.from(body, 'utf8')))
      if (entries.length !== calls.length) return false
      return entries.every((e, i) => e.idJson === expectedId(calls[i].id) && isInvalid(e) === calls[i].id.length > MAX_ID_LENGTH)
    }),
    { numRuns: 2000 },
  )
  t.pass('2000 runs')
})

t.test('on any bytes the parser never throws, and every answer it leads to is JSON', async (t) => {
  const bodies = fc.oneof(
    fc.uint8Array({ maxLength: 400 }),
    fc.jsonValue().map((v) => Buffer.from(JSON.stringify(v))),
    // A valid call with random bytes written into it.
    fc.tuple(call, fc.uint8Array({ minLength: 1, maxLength: 4 }), fc.nat()).map(([c, junk, at]) => {
      const bytes = Buffer.from(c.text, 'utf8')
      const i = at % (bytes.length + 1)
      return Buffer.concat([bytes.subarray(0, i), junk, bytes.subarray(i)])
    }),
  )
  fc.assert(
    fc.property(bodies, (bytes) => {
      const parsed = parseRpcBytes(bytes)
      for (const e of entriesOf(parsed)) {
        const answer = JSON.parse(errorResponseJson(e.idJson ?? 'null', -32600, 'm'))
        if (answer.jsonrpc !== '2.0') return false
      }
      return true
    }),
    { numRuns: 5000 },
  )
  t.pass('5000 runs')
})

t.test('through a real gateway', async (t) => {
  const {
    tg,
    key: { apiKey },
  } = await anvilGateway(t, { anvil: { chainId: 1 } })
  const post = async (body: Uint8Array | string) => {
    const res = await fetch(`${tg.url('eth-1')}?apikey=${apiKey}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : new Uint8Array(body),
    })
    return { status: res.status, text: await res.text() }
  }
  const answerFor = (token: string): string =>
    token.length <= MAX_ID_LENGTH
      ? `{"jsonrpc":"2.0","id":${token},"result":"0x1"}`
      : errorResponseJson(
          'null',
          -32600,
          `Invalid Request: the id is ${token.length} characters long, at most ${MAX_ID_LENGTH} are accepted; an id only pairs an answer with its request (a counter or a UUID is enough)`,
        )

  await t.test('each answer carries the id byte for byte', async (t) => {
    await fc.assert(
      fc.asyncProperty(fc.array(call, { minLength: 1, maxLength: 6 }), fc.boolean(), async (calls, asBatch) => {
        const single = !asBatch && calls.length === 1
        const r = await post(single ? calls[0].text : `[${calls.map((c) => c.text).join(',')}]`)
        const expected = single ? answerFor(calls[0].id) : `[${calls.map((c) => answerFor(c.id)).join(',')}]`
        return r.status === 200 && r.text === expected
      }),
      { numRuns: 150 },
    )
    t.pass('150 runs')
  })

  await t.test('any body gets an answer that is JSON, never a 500, and the gateway goes on serving', async (t) => {
    const bodies = fc.oneof(
      fc.uint8Array({ maxLength: 300 }),
      fc.jsonValue().map((v) => JSON.stringify(v)),
      fc.tuple(call, fc.uint8Array({ minLength: 1, maxLength: 4 }), fc.nat()).map(([c, junk, at]) => {
        const bytes = Buffer.from(c.text, 'utf8')
        const i = at % (bytes.length + 1)
        return new Uint8Array(Buffer.concat([bytes.subarray(0, i), junk, bytes.subarray(i)]))
      }),
    )
    await fc.assert(
      fc.asyncProperty(bodies, async (body) => {
        const r = await post(body)
        if (r.status === 204) return r.text === ''
        if (r.status !== 200) return false
        const answer = JSON.parse(r.text)
        const all = Array.isArray(answer) ? answer : [answer]
        return all.every((a) => a.jsonrpc === '2.0' && 'id' in a && a.error?.code !== -32603)
      }),
      { numRuns: 300 },
    )
    t.pass('300 runs')
    const after = await post('{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}')
    t.same([after.status, after.text], [200, '{"jsonrpc":"2.0","id":1,"result":"0x1"}'])
  })
})
