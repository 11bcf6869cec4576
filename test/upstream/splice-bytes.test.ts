import t from 'tap'
import { readResponseHead, readResponseHeadBytes, spliceId, spliceIdBytes } from '../../src/upstream/splice-id.js'
import { MalformedResponse } from '../../src/upstream/errors.js'

// Answers kept as bytes must come out exactly as spliceId makes them from the decoded text.

const cases = [
  '{"jsonrpc":"2.0","id":42,"result":"0x1"}',
  '{"jsonrpc":"2.0","id":42,"error":{"code":-32000,"message":"ünïcödé ✓"}}',
  '{"id":7,"jsonrpc":"2.0","result":{"id":1,"name":"日本"}}',
  '{"jsonrpc":"2.0","result":{"id":"inner"},"id":99}',
  '{\n  "jsonrpc" : "2.0",\n  "result" : "é",\n  "id" : 12 \n}',
  '{"jsonrpc":"2.0","id":"ä-1","result":"x"}',
  `{"jsonrpc":"2.0","id":${'1'.repeat(300)},"result":"long id past the prefix"}`,
]

t.test('spliceIdBytes equals spliceId, for every layout and client id', async (t) => {
  for (const text of cases) {
    for (const idJson of ['1', '"ünï ✓"', 'null', '"a\\"b"']) {
      const out = spliceIdBytes(Buffer.from(text, 'utf8'), idJson)
      t.equal(out.toString('utf8'), spliceId(text, idJson), `${text.slice(0, 30)} with ${idJson}`)
    }
  }
})

t.test('readResponseHeadBytes reads what readResponseHead reads', async (t) => {
  for (const text of cases) {
    const { id, isError } = readResponseHeadBytes(Buffer.from(text, 'utf8'))
    t.same({ id, isError }, readResponseHead(text), text.slice(0, 40))
  }
  const large = Buffer.from(`{"jsonrpc":"2.0","id":5,"result":"${'ab'.repeat(600_000)}"}`)
  t.same(readResponseHeadBytes(large).span, { start: 22, end: 23 }, 'a 1 MB answer is read from its first bytes')
  t.throws(() => readResponseHeadBytes(Buffer.from('<html>bad gateway</html>')), MalformedResponse)
})
