import t from 'tap'
import fc from 'fast-check'
import { readResponseHead, spliceId, spliceIdAt, splitBatch, splitBatchHeads } from '../../src/upstream/json-rpc-wire.js'
import { MalformedResponse } from '../../src/upstream/errors.js'

/** What a correct splice must equal, computed the slow way (only valid for compact input). */
function expected(text: string, clientIdJson: string): unknown {
  return { ...JSON.parse(text), id: JSON.parse(clientIdJson) }
}

t.test('fast layouts keep every other byte', async (t) => {
  const a = '{"jsonrpc":"2.0","id":42,"result":"0x1"}'
  t.equal(spliceId(a, '7'), '{"jsonrpc":"2.0","id":7,"result":"0x1"}')
  t.equal(spliceId(a, '"abc"'), '{"jsonrpc":"2.0","id":"abc","result":"0x1"}')
  t.equal(spliceId(a, 'null'), '{"jsonrpc":"2.0","id":null,"result":"0x1"}')
  const b = '{"id":42,"jsonrpc":"2.0","result":{"id":1}}'
  t.equal(spliceId(b, '"x"'), '{"id":"x","jsonrpc":"2.0","result":{"id":1}}')
  const last = '{"jsonrpc":"2.0","id":42}'
  t.equal(spliceId(last, '1'), '{"jsonrpc":"2.0","id":1}')
  const strId = '{"jsonrpc":"2.0","id":"a\\"b,c","result":1}'
  t.equal(spliceId(strId, '2'), '{"jsonrpc":"2.0","id":2,"result":1}')
})

t.test('nested id before the top-level id', async (t) => {
  const text = '{"jsonrpc":"2.0","result":{"id":"inner","x":[{"id":3}]},"id":99}'
  t.equal(spliceId(text, '5'), '{"jsonrpc":"2.0","result":{"id":"inner","x":[{"id":3}]},"id":5}')
  t.same(readResponseHead(text), { id: 99, isError: false })
})

t.test('whitespace and pretty printing', async (t) => {
  const text = '{\n  "jsonrpc" : "2.0",\n  "result" : { "id" : 1 },\n  "id" : 12 \n}'
  t.equal(spliceId(text, '"q"'), '{\n  "jsonrpc" : "2.0",\n  "result" : { "id" : 1 },\n  "id" : "q" \n}')
  t.same(readResponseHead(text), { id: 12, isError: false })
  t.same(readResponseHead(' { "error": {"code":-1}, "id": "s" }'), { id: 's', isError: true })
})

t.test('strings with escaped quotes and braces do not confuse the scan', async (t) => {
  const text = '{"jsonrpc":"2.0","result":"a\\"},\\"id\\":1,{\\\\","id":8}'
  t.same(JSON.parse(spliceId(text, '"z"')), expected(text, '"z"'))
  t.ok(spliceId(text, '"z"').startsWith('{"jsonrpc":"2.0","result":"a\\"},\\"id\\":1,{\\\\",'))
  const keyWithId = '{"jsonrpc":"2.0","result":{"\\"id":"}"},"id":3}'
  t.same(readResponseHead(keyWithId), { id: 3, isError: false })
  t.same(JSON.parse(spliceId(keyWithId, '4')), expected(keyWithId, '4'))
})

t.test('an escaped member name is still the id', async (t) => {
  const text = '{"result":1,"\\u0069d":6}'
  t.equal(spliceId(text, '1'), '{"result":1,"\\u0069d":1}')
  t.same(readResponseHead(text), { id: 6, isError: false })
})

t.test('ids of every JSON-RPC type are read back', async (t) => {
  t.same(readResponseHead('{"jsonrpc":"2.0","id":"abc","result":null}'), { id: 'abc', isError: false })
  t.same(readResponseHead('{"jsonrpc":"2.0","id":null,"error":{"code":-32700}}'), { id: null, isError: true })
  t.same(readResponseHead('{"id":-3,"jsonrpc":"2.0","error":{"code":1}}'), { id: -3, isError: true })
  t.same(readResponseHead('{"jsonrpc":"2.0","id":1.5e3,"result":[]}'), { id: 1500, isError: false })
  t.same(readResponseHead('{"jsonrpc":"2.0","result":1,"error":null,"id":2}'), { id: 2, isError: false })
  t.same(readResponseHead('{"jsonrpc":"2.0","result":1}'), { id: null, isError: false })
})

t.test('an object id (not JSON-RPC) is replaced whole', async (t) => {
  const text = '{"id":{"a":1,"b":2},"result":1}'
  t.equal(spliceId(text, '3'), '{"id":3,"result":1}')
})

t.test('no id at all: the parser adds one', async (t) => {
  t.same(JSON.parse(spliceId('{"jsonrpc":"2.0","result":"0x1"}', '"k"')), { jsonrpc: '2.0', result: '0x1', id: 'k' })
})

t.test('not an object: MalformedResponse', async (t) => {
  t.throws(() => spliceId('<html>bad gateway</html>', '1'), MalformedResponse)
  t.throws(() => spliceId('[1,2]', '1'), MalformedResponse)
  t.throws(() => readResponseHead(''), MalformedResponse)
  t.throws(() => readResponseHead('{"result":"unterminated,"id":1'), MalformedResponse)
  // The fast path reads the head only: the rest is the node's business, passed on untouched.
  t.same(readResponseHead('{"id":1,"result":"unterminated'), { id: 1, isError: false })
})

t.test('random nesting agrees with JSON.parse', async (t) => {
  let seed = 7
  const rnd = (n: number) => (seed = (seed * 1103515245 + 12345) % 2147483648) % n
  const value = (depth: number): unknown => {
    switch (depth > 3 ? rnd(3) : rnd(6)) {
      case 0:
        return rnd(1000)
      case 1:
        return ['x"', '}', '{"id":1}', '\\', 'id'][rnd(5)]
      case 2:
        return null
      case 3:
        return [value(depth + 1), value(depth + 1)]
      default:
        return { id: value(depth + 1), [`k${rnd(3)}`]: value(depth + 1) }
    }
  }
  for (let n = 0; n < 200; n++) {
    const entries: [string, unknown][] = [
      ['jsonrpc', '2.0'],
      ['result', value(0)],
      ['extra', value(0)],
    ]
    entries.splice(rnd(4), 0, ['id', rnd(2) ? rnd(100) : `s${rnd(100)}`])
    const text = JSON.stringify(Object.fromEntries(entries), null, rnd(2) ? 1 : undefined)
    const parsed = JSON.parse(text)
    t.same(readResponseHead(text), { id: parsed.id, isError: false }, text)
    t.same(JSON.parse(spliceId(text, '"c"')), { ...parsed, id: 'c' }, text)
  }
})

t.test('a batch answer taken apart in one pass reads as splitBatch and readResponseHead do', async (t) => {
  // The layouts nodes write (and near misses of the one read without a copy: other ids, members
  // in another order, spaces), each element then given a client id by its known span.
  const id = fc.oneof(
    fc.integer({ min: 1, max: 2 ** 40 }).map(String),
    fc.constantFrom('0', '-1', '01', '1.5', '1e3', 'null', '"7"', '1234567890123456789', '2'),
  )
  const element = fc.tuple(id, fc.constantFrom('result', 'error'), fc.jsonValue({ maxDepth: 2 }), fc.nat(4)).map(([i, member, value, layout]) => {
    const v = JSON.stringify(value) ?? 'null'
    switch (layout) {
      case 0:
        return `{"id":${i},"jsonrpc":"2.0","${member}":${v}}`
      case 1:
        return `{"jsonrpc":"2.0", "id":${i}, "${member}":${v}}`
      case 2:
        return `{"jsonrpc":"2.0","${member}":${v},"id":${i}}`
      default:
        return `{"jsonrpc":"2.0","id":${i},"${member}":${v}}`
    }
  })
  const answer = fc.tuple(fc.array(fc.oneof(element, fc.constantFrom('{"jsonrpc":"2.0","id":', '1', '{}')), { maxLength: 6 }), fc.constantFrom('', ' ', '\n'))
  let fast = 0
  fc.assert(
    fc.property(answer, ([elements, gap]) => {
      const text = `[${gap}${elements.join(`,${gap}`)}${gap}]`
      const items = splitBatchHeads(text)
      const general = splitBatch(text)
      if (general === undefined) return t.equal(items, undefined, text)
      const expected = general.flatMap((el) => {
        try {
          const head = readResponseHead(el)
          return [{ text: el, id: head.id, isError: head.isError }]
        } catch {
          return []
        }
      })
      t.strictSame(
        items?.map(({ text, id, isError }) => ({ text, id, isError })),
        expected,
        text,
      )
      for (const item of items ?? []) {
        if (item.idSpan === undefined) continue
        fast++
        t.equal(spliceIdAt(item.text, item.idSpan, '"c"'), spliceId(item.text, '"c"'), item.text)
      }
    }),
    { numRuns: 1500 },
  )
  t.ok(fast > 150, `${fast} elements read without a copy`)
})
