import t, { type Test } from 'tap'
import fc from 'fast-check'
import { readCommonLayout } from '../../src/rpc/common-layout.js'
import { parseAnyLayout, parseRpcBody } from '../../src/rpc/parse.js'

// The common layout is read without JSON.parse of the whole body (src/rpc/common-layout.ts). It
// must give exactly what the general way gives, for every body it takes, and leave every other
// body to the general way. Compared here on generated bodies: the layouts clients write, with
// whitespace, every kind of id and params, and the near misses that must fall back.

const ws = fc.constantFrom('', '', '', ' ', '\n', '\t', ' \r\n ')
const idToken = fc.oneof(
  fc.integer({ min: 0, max: 2 ** 31 }).map(String),
  fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }).map(String),
  fc.constantFrom('0', '-0', 'null', '""', '"a"', '"é🙂"', '01', '1.5', '1e3', '-', '"a\\"b"', '"\\u0041"', 'nul', 'true', '"a\tb"', '[1]', '{}'),
  fc.string({ maxLength: 12 }).map((s) => JSON.stringify(s)),
  fc.constant(`"${'x'.repeat(260)}"`),
)
const method = fc.oneof(
  fc.constantFrom('"eth_chainId"', '"eth_getBalance"', '"eth_call"', '"eth_getLogs"', '""', '"eth_\\u0063hainId"', '"a\\nb"', '1', 'null', '"méthode"'),
  fc.string({ maxLength: 10 }).map((s) => JSON.stringify(s)),
)
const params = fc.oneof(
  fc.constantFrom(
    '[]',
    '[ ]',
    '{}',
    'null',
    '1',
    '"x"',
    '[1,',
    '[[[[[[]]]]]]',
    `${'['.repeat(70)}${']'.repeat(70)}`,
    '["0x1", "latest"]',
    '[{"to":"0x00","data":"0x"},"latest"]',
    // Members a Go node reads ignoring case: the general way refuses them, the common layout leaves them to it.
    '[{"to":"0x00","TO":"0x01"},"latest"]',
    '["0x1",{"blockNumber":"0x0","BlockHash":"0x00"}]',
    '[{"address":"0x00","ADDRESS":null}]',
    '[{"toBlock":{"blockHash":"0x00"}}]',
    // Flat arrays of strings and literals are read without JSON.parse: these and their near misses.
    '["0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045","latest"]',
    '[ "0x1" ,true,false , null ]',
    '["é🙂", ""]',
    '["a\\"b"]',
    '["\\u0041"]',
    '["a\tb"]',
    '["x", 1]',
    '["x",]',
    '["x" "y"]',
    '[truex]',
    '[nul]',
    '["x"',
  ),
  fc
    .array(
      fc.oneof(
        fc.string({ maxLength: 8 }).map((x) => JSON.stringify(x)),
        fc.constantFrom('true', 'false', 'null', 'trueish'),
      ),
      { maxLength: 4 },
    )
    .map((items) => `[${items.join(',')}]`),
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify([v])),
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify({ v })),
)
const version = fc.constantFrom('"2.0"', '"2.0"', '"2.0"', '"1.0"', '2.0', '"2.0 "')

/** A request object: some of the members, in any order, maybe one twice or one more. */
const request = fc
  .record({
    members: fc.subarray(['jsonrpc', 'id', 'method', 'params', 'extra', 'id'], { minLength: 0 }),
    order: fc.array(fc.nat(), { minLength: 6, maxLength: 6 }),
    id: idToken,
    method,
    params,
    version,
    gaps: fc.array(ws, { minLength: 8, maxLength: 8 }),
    escapedName: fc.boolean(),
  })
  .map(({ members, order, id, method, params, version, gaps, escapedName }) => {
    const sorted = members.map((m, i) => ({ m, k: order[i] })).sort((a, b) => a.k - b.k)
    const values: Record<string, string> = { jsonrpc: version, id, method, params, extra: '{"id":1}' }
    const parts = sorted.map(({ m }, i) => {
      const name = escapedName && i === 0 ? `"\\u00${m.charCodeAt(0).toString(16)}${m.slice(1)}"` : `"${m}"`
      return `${gaps[i % 8]}${name}${gaps[(i + 1) % 8]}:${gaps[(i + 2) % 8]}${values[m]}`
    })
    return `{${parts.join(',')}${gaps[7]}}`
  })

const usual = fc
  .tuple(fc.integer({ min: 1, max: 1e6 }), fc.constantFrom('eth_chainId', 'eth_blockNumber', 'eth_getBalance'), fc.boolean())
  .map(([id, m, ethers]) => (ethers ? `{"method":"${m}","params":[],"id":${id},"jsonrpc":"2.0"}` : `{"jsonrpc":"2.0","id":${id},"method":"${m}","params":[]}`))

/** The usual layout with one token from the generators above: each near miss often enough to be met. */
const nearlyUsual = fc
  .tuple(idToken, method, params, version, fc.nat(3))
  .map(
    ([id, m, p, v, which]) =>
      [
        `{"jsonrpc":"2.0","id":${id},"method":"eth_chainId","params":[]}`,
        `{"jsonrpc":"2.0","id":1,"method":${m},"params":[]}`,
        `{"jsonrpc":"2.0","id":1,"method":"eth_call","params":${p}}`,
        `{"jsonrpc":${v},"id":1,"method":"eth_chainId","params":[]}`,
      ][which],
  )

const body = fc.oneof(
  request,
  nearlyUsual,
  usual,
  fc
    .tuple(fc.array(fc.oneof(request, nearlyUsual, usual), { minLength: 0, maxLength: 6 }), ws, fc.constantFrom('', ',', ' x', ']'))
    .map(([items, gap, tail]) => `${gap}[${gap}${items.join(`${gap},`)}]${tail}${gap}`),
)

/**
 * A parsed body with each call's params text checked and set aside: the common layout keeps the
 * params as the client wrote them (RpcCall.paramsJson), which must be JSON of the same params.
 */
function withoutParamsText(parsed: unknown, t: Test, text: string): unknown {
  const call = (c: any) => {
    if (c.paramsJson !== undefined) t.strictSame(JSON.parse(c.paramsJson), c.params, `params text of ${text}`)
    return 'invalid' in c ? c : { ...c, paramsJson: undefined }
  }
  const p = parsed as any
  if (p.kind === 'single') return { ...p, entry: call(p.entry) }
  if (p.kind === 'batch') return { ...p, entries: p.entries.map(call) }
  return p
}

t.test('every body it reads, it reads as the general way does; any other it leaves to it', async (t) => {
  let read = 0
  fc.assert(
    fc.property(body, (text) => {
      const general = parseAnyLayout(text)
      const common = readCommonLayout(text)
      if (common !== undefined) {
        read++
        const asParsed = 'single' in common ? { kind: 'single', entry: common.single } : { kind: 'batch', entries: common.batch }
        t.strictSame(withoutParamsText(asParsed, t, text), withoutParamsText(general, t, text), text)
      }
      t.strictSame(withoutParamsText(parseRpcBody(text), t, text), withoutParamsText(general, t, text), text)
    }),
    { numRuns: 4000 },
  )
  // The generators must reach the fast path often, or this test would compare nothing.
  t.ok(read > 1200, `the common layout read ${read} of 4000 bodies`)
})

t.test('the layouts of viem, web3.js and ethers, single and batched, take the common path', async (t) => {
  const viem = '{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045","latest"]}'
  const ethers = '{"method":"eth_chainId","params":[],"id":42,"jsonrpc":"2.0"}'
  const notification = '{"jsonrpc":"2.0","method":"eth_chainId","params":[]}'
  const balanceParams = '["0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045","latest"]'
  t.strictSame(readCommonLayout(viem), {
    single: { method: 'eth_getBalance', params: ['0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045', 'latest'], idJson: '1', paramsJson: balanceParams },
  })
  t.strictSame(readCommonLayout(`[${viem},${ethers},${notification}]`), {
    batch: [
      { method: 'eth_getBalance', params: ['0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045', 'latest'], idJson: '1', paramsJson: balanceParams },
      { method: 'eth_chainId', params: [], idJson: '42', paramsJson: '[]' },
      { method: 'eth_chainId', params: [], idJson: undefined, paramsJson: '[]' },
    ],
  })
  // An id above 2^53 is kept as its text.
  t.equal(
    (readCommonLayout('{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"m"}') as { single: { idJson: string } }).single.idJson,
    '123456789012345678901234567890',
  )
})

t.test('near misses fall back to the general way, which gives their errors', async (t) => {
  for (const text of [
    '[]',
    '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]',
    '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}}',
    '{"jsonrpc":"2.0","id":1,"id":2,"method":"eth_chainId"}',
    '{"jsonrpc":"2.0","id":01,"method":"eth_chainId"}',
    '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[1,]}',
    '{"jsonrpc":"2.0","id":1,"method":""}',
    '{"id":1,"method":"eth_chainId"}',
    '\ufeff{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}',
  ]) {
    t.equal(readCommonLayout(text), undefined, text)
  }
})
