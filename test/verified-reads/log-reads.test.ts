import t from 'tap'
import { padHex } from 'viem'
import { EMITTED_TOPIC } from '../../harness/log-emitter.js'
import { rpc } from '../helpers/gateway.js'
import { lyingNodes } from '../helpers/lying-nodes.js'
import { metric } from '../helpers/metrics.js'

// Issue 40, item 4: with `verify: "reads"`, an eth_getLogs answer is proven complete: blocks whose
// header bloom cannot match hold no such log; the others' receipts are proven against their roots,
// and the node's logs must be exactly the matching logs of those receipts. One real anvil behind
// three proxies: two honest and slow, one fast that leaves out a log (or alters one).

const { anvil, busy, honest, slow, liar, tg, apiKey } = await lyingNodes(t, 'reads')
const oneShort = { alter: (logs: unknown) => (Array.isArray(logs) && logs.length > 0 ? logs.slice(1) : logs) }
liar.set('eth_getLogs', oneShort)

const call = (params: unknown[], id: number | string = 1) => ({ jsonrpc: '2.0', id, method: 'eth_getLogs', params })
const truth = async (params: unknown[]) => (await anvil.rpc('eth_getLogs', params)).result as unknown[]

const TRANSFER = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef'
const head = await anvil.rpc('eth_getBlockByNumber', ['latest', false])
const filters: [string, Record<string, unknown>][] = [
  ['every log of the chain', { fromBlock: '0x0', toBlock: 'latest' }],
  ['the token’s', { fromBlock: 'earliest', address: busy.token }],
  [
    'Transfers to one account (a topic position after a null)',
    { fromBlock: '0x0', toBlock: 'latest', topics: [TRANSFER, null, padHex(busy.delegated, { size: 32 })] },
  ],
  ['two addresses', { fromBlock: '0x40', toBlock: `0x${busy.head.toString(16)}`, address: [busy.token, busy.emitter] }],
  ['the emitter’s topic', { fromBlock: '0x0', topics: [[EMITTED_TOPIC, TRANSFER]] }],
  ['one block by hash', { blockHash: head.result.hash }],
  ['none match', { fromBlock: '0x0', toBlock: 'latest', address: busy.absent }],
]

t.test('verify off: the liar’s short answers reach the client', async (t) => {
  let short = 0
  for (let i = 0; i < 10; i++) {
    const r = await rpc(tg.url('eth-2'), call([filters[0][1]]), { apiKey })
    if (r.json.result.length !== (await truth([filters[0][1]])).length) short++
  }
  t.ok(short > 0, `${short} of 10 answers a log short`)
})

t.test('verify reads: every filter answers exactly the node’s logs, proven complete', async (t) => {
  for (const [what, filter] of filters) {
    const r = await rpc(tg.url('eth-1'), call([filter], 'l'), { apiKey })
    t.same(r.json, { jsonrpc: '2.0', id: 'l', result: await truth([filter]) }, what)
    t.ok(r.headers.get('x-tollgate-verified'), `${what}: verified`)
  }
  t.ok((await truth([filters[0][1]])).length >= 4, 'the chain has logs to leave out')
})

t.test('the liar chosen first: its short answer is caught, and another node’s is served', async (t) => {
  // One block by hash: no headers to link, so nothing but the head polls has measured the nodes,
  // and the liar (the fastest) is the one asked first.
  const transferBlock = (await truth([{ fromBlock: '0x0', address: busy.token }]))[0] as { blockHash: string }
  const filter = { blockHash: transferBlock.blockHash }
  const before = liar.received('eth_getLogs')
  for (let i = 0; i < 5; i++) {
    const r = await rpc(tg.url('eth-3'), call([filter], i), { apiKey })
    t.same(r.json, { jsonrpc: '2.0', id: i, result: await truth([filter]) }, `read ${i}`)
  }
  t.ok(liar.received('eth_getLogs') > before, `the liar was asked (${liar.received('eth_getLogs') - before} times)`)
  t.ok((await metric(tg.gateway.admin, 'tollgate_verify_failed_total', { network: 'eth-3', check: 'LOGS_COMPLETE' }))! > 0, 'its short answers counted')
})

t.test('an added or altered log is caught too', async (t) => {
  t.teardown(() => liar.set('eth_getLogs', oneShort))
  for (const alter of [
    (logs: unknown) => (Array.isArray(logs) && logs.length > 0 ? [...logs, logs[0]] : logs),
    (logs: unknown) => (Array.isArray(logs) && logs.length > 0 ? [{ ...(logs[0] as object), data: '0x01' }, ...logs.slice(1)] : logs),
  ]) {
    liar.set('eth_getLogs', { alter })
    const all = [honest, slow, liar]
    // Each node tells the same lie: no answer passes, and the client hears so, not the lie.
    for (const p of all) p.set('eth_getLogs', { alter })
    const r = await rpc(tg.url('eth-1'), call([filters[1][1]]), { apiKey })
    t.equal(r.json.error?.code, -32026, r.json.error?.message)
    t.match(r.json.error?.message, /LOGS_COMPLETE/)
    for (const p of [honest, slow]) p.clear('eth_getLogs')
  }
})

t.test('a range wider than the proof bound is refused with a way to narrow it', async (t) => {
  await anvil.rpc('anvil_mine', ['0x7d0'])
  const r = await rpc(tg.url('eth-1'), call([{ fromBlock: '0x0', toBlock: `0x${(busy.head + 0x7d0).toString(16)}` }]), { apiKey })
  t.equal(r.json.error?.code, -32027, JSON.stringify(r.json))
  t.match(r.json.error?.message, /narrower block range/)
})
