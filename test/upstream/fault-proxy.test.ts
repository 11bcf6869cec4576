import t from 'tap'
import { startAnvil } from '../../harness/anvil.js'
import { startFaultProxy } from '../helpers/fault-proxy.js'
import { waitFor } from '../helpers/eventually.js'

// The test equipment of the upstream tests: a proxy in front of a real anvil that delays,
// alters, refuses, answers null and queues, per method or namespace, batches call by call.

const anvil = await startAnvil()
t.teardown(() => anvil.stop())
const proxy = await startFaultProxy(anvil)
t.teardown(() => proxy.close())

const who = '0x70997970c51812dc3a010c7d01b50e68d4dc79c8'
const post = async (body: unknown): Promise<any> => {
  const res = await fetch(proxy.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  return res.json()
}
const call = (method: string, params: unknown[] = [], id: number | string = 1) => ({ jsonrpc: '2.0', id, method, params })

t.test('without rules it answers what the node answers', async (t) => {
  t.same(await post(call('eth_chainId')), await anvil.rpc('eth_chainId'))
  t.same(await post(call('eth_getBalance', [who, 'latest'])), await anvil.rpc('eth_getBalance', [who, 'latest']))
  t.equal(proxy.forwarded('eth_chainId'), 1)
})

t.test('alter, refuse, answer null; rules change while it runs', async (t) => {
  t.teardown(() => proxy.clear())
  const balance = BigInt((await anvil.rpc('eth_getBalance', [who, 'latest'])).result)
  proxy.set('eth_getBalance', { alter: (r) => `0x${(BigInt(r as string) + 1n).toString(16)}` })
  t.equal(BigInt((await post(call('eth_getBalance', [who, 'latest']))).result), balance + 1n, 'one wei more than the node says')

  proxy.set('debug_*', { refuse: true })
  const before = proxy.forwarded('debug_traceTransaction')
  const refused = await post(call('debug_traceTransaction', ['0x'.padEnd(66, '0')], 'x'))
  t.same(refused, { jsonrpc: '2.0', id: 'x', error: { code: -32601, message: 'the method debug_traceTransaction does not exist/is not available' } })
  t.equal(proxy.forwarded('debug_traceTransaction'), before, 'the node never saw it')

  proxy.set('eth_getBlockByNumber', { answerNull: true })
  t.same(await post(call('eth_getBlockByNumber', ['latest', false], 2)), { jsonrpc: '2.0', id: 2, result: null })

  proxy.clear('eth_getBalance')
  t.equal(BigInt((await post(call('eth_getBalance', [who, 'latest']))).result), balance, 'the rule is gone')
})

t.test('a batch gets its rules call by call, in order', async (t) => {
  t.teardown(() => proxy.clear())
  proxy.set('debug_*', { refuse: true })
  proxy.set('eth_getBlockByNumber', { answerNull: true })
  const answers = await post([call('eth_chainId', [], 'a'), call('debug_getRawBlock', ['latest'], 'b'), call('eth_getBlockByNumber', ['0x0', false], 'c')])
  t.same(
    answers.map((a: any) => a.id),
    ['a', 'b', 'c'],
  )
  t.equal(answers[0].result, (await anvil.rpc('eth_chainId')).result)
  t.equal(answers[1].error.code, -32601)
  t.equal(answers[2].result, null)
})

t.test('workers: at most N calls at once, the rest wait in arrival order', async (t) => {
  t.teardown(() => {
    proxy.clear()
    proxy.workers = undefined
  })
  proxy.workers = 1
  proxy.set('eth_getBalance', { delayMs: 200 })
  const finished: string[] = []
  const sent = ['a', 'b', 'c'].map((id) => post(call('eth_getBalance', [who, 'latest'], id)).then((a) => finished.push(a.id)))
  await waitFor(() => proxy.queued === 2, 'two calls waiting behind the one being handled')
  await Promise.all(sent)
  t.same(finished, ['a', 'b', 'c'])
  t.equal(proxy.queued, 0)
})
