import t from 'tap'
import { foldName, knownMembers, strayMember } from '../../src/rpc/member-names.js'
import { paramsRefusal } from '../../src/rpc/params-objects.js'
import { isInvalid, parseRpcBody } from '../../src/rpc/parse.js'

// The objects of the params a node written in Go reads otherwise than the gateway, refused when
// parsed (src/rpc/params-objects.ts); what is exact, unknown or flat passes untouched.

t.test("Go's folding: ASCII case, the Kelvin sign as k, the long s as s; nothing else reaches ASCII", async (t) => {
  t.equal(foldName('FromBlock'), 'fromblock')
  t.equal(foldName('fromBloc\u212a'), 'fromblock')
  t.equal(foldName('addre\u017f\u017f'), 'address')
  t.not(foldName('\u0130'), 'i', 'the dotted capital I folds to no ASCII letter')
  const known = knownMembers('x', ['to', 'data'])
  t.same(strayMember({ to: 1, TO: 2 }, known), { name: 'TO', canonical: 'to' })
  t.equal(strayMember({ to: 1, data: 2, extra: 3, EXTRA: 4 }, known), undefined, 'unknown members are the node’s to judge')
})

t.test('each object the gateway reads, by method', async (t) => {
  const A = '0x' + '11'.repeat(20)
  const refused: Array<[string, unknown[], RegExp]> = [
    ['eth_call', [{ to: A, TO: A }, 'latest'], /transaction object has a member "TO"/],
    ['eth_estimateGas', [{ To: A }], /write "to"/],
    ['eth_createAccessList', [{ to: A, accessList: [{ Address: A, storageKeys: [] }] }], /access list entry has a member "Address"/],
    ['debug_traceCall', [{ to: A, Data: '0x' }, 'latest', {}], /"Data"/],
    ['eth_getBalance', [A, { blockHash: '0x00', RequireCanonical: true }], /block object has a member "RequireCanonical"/],
    ['eth_getStorageAt', [A, '0x0', { BLOCKNUMBER: '0x0' }], /"BLOCKNUMBER"/],
    ['eth_getLogs', [{ Topics: [] }], /logs filter has a member "Topics"/],
    ['eth_newFilter', [{ address: A, toBlock: { blockHash: '0x00' } }], /eth_newFilter's toBlock is an object/],
    ['eth_subscribe', ['logs', { ADDRESS: A }], /eth_subscribe's logs filter/],
    ['eth_call', [{ to: A, data: '0x01', input: '0x02' }, 'latest'], /both "data" and "input", and they differ/],
  ]
  for (const [method, params, message] of refused) {
    const r = paramsRefusal(method, params)
    t.equal(r?.rpc, -32602, method)
    t.match(r?.message, message)
  }
  for (const [method, params] of [
    ['eth_call', [{ to: A, data: '0x', input: '0x', accessList: [{ address: A, storageKeys: [] }] }, { blockNumber: '0x0' }]],
    ['eth_getBalance', [A, 'latest']],
    ['eth_estimateGas', [{ to: A, data: '0x01', input: '0x01' }]],
    ['eth_estimateGas', [{ to: A, data: '0xAB', input: '0xab' }]],
    ['eth_getLogs', [{ address: [A], topics: [null], fromBlock: '0x0', toBlock: 'latest' }]],
    ['eth_getLogs', [{ blockHash: '0x00' }]],
    ['eth_subscribe', ['newHeads']],
    ['eth_sendRawTransaction', ['0x00']],
    ['web3_clientVersion', []],
  ] as Array<[string, unknown[]]>) {
    t.equal(paramsRefusal(method, params), undefined, `${method} ${JSON.stringify(params)}`)
  }
})

t.test('parsed: a single call and a batch entry, common layout or not, get the same refusal', async (t) => {
  const body = '{"jsonrpc":"2.0","id":7,"method":"eth_call","params":[{"to":"0x00","TO":"0x01"},"latest"]}'
  const single = parseRpcBody(body)
  t.equal(single.kind, 'single')
  const entry = single.kind === 'single' ? single.entry : undefined
  t.ok(entry && isInvalid(entry))
  if (entry && isInvalid(entry)) {
    t.equal(entry.idJson, '7')
    t.equal(entry.rpc, -32602)
  }
  const batch = parseRpcBody(`[${body},{"jsonrpc":"2.0","id":8,"method":"eth_call","params":[{"to":"0x00"},"latest"]}]`)
  t.equal(batch.kind, 'batch')
  if (batch.kind === 'batch') {
    t.ok(isInvalid(batch.entries[0]!))
    t.notOk(isInvalid(batch.entries[1]!), 'the exact call beside it is read')
  }
})
