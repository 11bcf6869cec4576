import t from 'tap'
import { joined, readResponseHead, readResponseHeadBytes, spliceId, spliceIdBytes } from '../../src/upstream/json-rpc-wire.js'
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
      t.equal(joined(out).toString('utf8'), spliceId(text, idJson), `${text.slice(0, 30)} with ${idJson}`)
    }
  }
})

t.test('an answer in chunks is spliced without joining them, and spliced again from its head alone', async (t) => {
  const result = `"${'ab'.repeat(300_000)}"`
  const text = `{"jsonrpc":"2.0","id":42,"result":${result}}`
  const bytes = Buffer.from(text)
  // As the socket reads came: 64 KiB pieces.
  const reads: Buffer[] = []
  for (let i = 0; i < bytes.length; i += 65536) reads.push(bytes.subarray(i, i + 65536))
  const once = spliceIdBytes(reads, '"first"')
  t.equal(joined(once).toString(), `{"jsonrpc":"2.0","id":"first","result":${result}}`)
  t.ok(once[0].length <= 256 + 7, 'only the head is new')
  t.equal(once.at(-1)?.buffer, reads.at(-1)?.buffer, "the node's bytes are not copied")
  // In-flight sharing splices the first caller's answer for each other caller.
  const twice = spliceIdBytes(once, '123456789012345678901234567890')
  t.equal(joined(twice).toString(), `{"jsonrpc":"2.0","id":123456789012345678901234567890,"result":${result}}`)
  t.equal(twice.at(-1)?.buffer, reads.at(-1)?.buffer, 'still not copied')
  // A shorter id than the node's leaves a head shorter than the prefix read: still spliced alone.
  const shorter = spliceIdBytes(spliceIdBytes(reads, '"a long id of the first caller"'), '1')
  t.equal(joined(shorter).toString(), `{"jsonrpc":"2.0","id":1,"result":${result}}`)
  t.equal(shorter.at(-1)?.buffer, reads.at(-1)?.buffer, 'not copied either')
  // A first read shorter than the head: read joined, still right.
  const tiny = [bytes.subarray(0, 10), bytes.subarray(10)]
  t.equal(joined(spliceIdBytes(tiny, '7')).toString(), `{"jsonrpc":"2.0","id":7,"result":${result}}`)
  // A layout the head reader does not know: the text way.
  const odd = Buffer.from(`{"result":${result},"id":42,"jsonrpc":"2.0"}`)
  t.equal(joined(spliceIdBytes([odd.subarray(0, 100), odd.subarray(100)], '8')).toString(), `{"result":${result},"id":8,"jsonrpc":"2.0"}`)
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
