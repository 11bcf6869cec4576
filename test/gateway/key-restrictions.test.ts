import t from 'tap'
import { anvilGateway } from '../helpers/anvil-gateway.js'
import { rpc } from '../helpers/gateway.js'
import { connectWs, tryUpgrade } from '../helpers/ws-client.js'
import { anvilAccount } from '../helpers/contracts.js'
import { deployTransferEmitter } from '../helpers/transfer-emitter.js'
import { metric } from '../helpers/metrics.js'
import { waitFor } from '../helpers/eventually.js'
import { keyRuleRefusedOf, usageEventsOf } from '../helpers/usage-events.js'

// A key's own restrictions against a real anvil, over HTTP and WebSocket: each rule type, each
// method family of the contract rule, AND between types and OR within one, and their counting.
const { tg, key, url, wsUrl, anvil } = await anvilGateway(t, { usageIntervalMs: 200 })
const emitter = await deployTransferEmitter(anvil)
const LISTED = emitter.address.toLowerCase()
const OTHER = '0x' + '77'.repeat(20)
const call = (method: string, params: unknown[] = [], id: number | string = 1) => ({ jsonrpc: '2.0', id, method, params })
const send = (body: unknown, headers: Record<string, string> = {}) => rpc(url, body, { apiKey: key.apiKey, headers })
const restrict = (r: unknown) => tg.restrictKey(key.accountId, r, true)
/** Restrictions reach the request path through the log and the projection: wait (bounded) for them to hold. */
const until = (check: () => Promise<boolean>) => waitFor(check, 'the restriction to reach the gateway')

t.test('a method rule: allowed methods pass, others get 403 -32002 naming the rule; a batch is judged call by call', async (t) => {
  await restrict({ methods: ['eth_chainId', 'debug_*'] })
  await until(async () => (await send(call('eth_blockNumber'))).status === 403)
  const refused = await send(call('eth_blockNumber'))
  t.equal(refused.json.error.code, -32002)
  t.match(refused.json.error.message, /method rule: "eth_blockNumber" is not among the methods this key may call \(eth_chainId, debug_\*\)/)
  t.equal((await send(call('eth_chainId'))).status, 200)
  const traced = await send(call('debug_traceCall', [{ to: OTHER }, 'latest', {}]))
  t.equal(traced.status, 200, 'a namespace entry allows its methods')
  t.notOk(traced.json.error?.code === -32002)
  const batch = await send([call('eth_chainId', [], 1), call('eth_blockNumber', [], 2), call('eth_gasPrice', [], 3)])
  t.equal(batch.status, 200)
  t.ok(batch.json[0].result, 'the allowed call is served')
  t.same(
    batch.json.slice(1).map((a: any) => a.error.code),
    [-32002, -32002],
    'each refused call is its own error entry',
  )
})

t.test('denied methods: those refused, everything else served', async (t) => {
  await restrict({ deniedMethods: ['eth_sendRawTransaction', 'trace_*'] })
  await until(async () => (await send(call('eth_blockNumber'))).status === 200)
  const r = await send(call('eth_sendRawTransaction', ['0x00']))
  t.equal(r.status, 403)
  t.match(r.json.error.message, /may not call "eth_sendRawTransaction" \(denied: eth_sendRawTransaction, trace_\*\)/)
  t.equal((await send(call('trace_block', ['latest']))).json.error.code, -32002)
})

t.test('a contract rule, method by method', async (t) => {
  await restrict({ contracts: [emitter.address.toUpperCase().replace('0X', '0x')] })
  await until(async () => (await send(call('eth_call', [{ to: OTHER }, 'latest']))).status === 403)
  const ok = async (body: unknown, what: string) => {
    const r = await send(body)
    t.equal(r.status, 200, what)
    t.not(r.json?.error?.code, -32002, what)
  }
  const no = async (body: unknown, what: string, message: RegExp) => {
    const r = await send(body)
    t.equal(r.status, 403, what)
    t.equal(r.json.error.code, -32002, what)
    t.match(r.json.error.message, message, what)
  }
  for (const m of ['eth_call', 'eth_estimateGas', 'eth_createAccessList']) {
    await ok(call(m, [{ to: emitter.address, from: anvilAccount(0).address }, 'latest']), `${m} to the listed contract`)
    await no(call(m, [{ to: OTHER }, 'latest']), `${m} to another`, /contract rule: .*`to` "0x7777.*" is not listed/)
    await no(call(m, [{ data: '0x00' }, 'latest']), `${m} creating a contract`, /without `to`/)
  }
  await ok(call('debug_traceCall', [{ to: LISTED }, 'latest', {}]), 'debug_traceCall to the listed contract')
  await no(call('debug_traceCall', [{ to: OTHER }, 'latest', {}]), 'debug_traceCall to another', /not listed/)
  for (const m of ['eth_getBalance', 'eth_getCode', 'eth_getTransactionCount']) {
    await ok(call(m, [LISTED, 'latest']), `${m} of the listed contract`)
    await no(call(m, [OTHER, 'latest']), `${m} of another`, /address "0x7777/)
  }
  await ok(call('eth_getStorageAt', [LISTED, '0x0', 'latest']), 'eth_getStorageAt of the listed contract')
  await no(call('eth_getStorageAt', [OTHER, '0x0', 'latest']), 'eth_getStorageAt of another', /not listed/)
  await ok(call('eth_getProof', [LISTED, [], 'latest']), 'eth_getProof of the listed contract')
  await no(call('eth_getProof', [OTHER, [], 'latest']), 'eth_getProof of another', /not listed/)
  // Logs: the filter must name addresses, every one listed.
  await ok(call('eth_getLogs', [{ address: LISTED, fromBlock: '0x0' }]), 'eth_getLogs of the listed contract')
  await ok(call('eth_getLogs', [{ address: [LISTED], fromBlock: '0x0' }]), 'eth_getLogs of a list of listed contracts')
  await no(call('eth_getLogs', [{ fromBlock: '0x0' }]), 'eth_getLogs without address', /without `address` reads every contract's logs/)
  await no(call('eth_getLogs', [{ address: [], fromBlock: '0x0' }]), 'eth_getLogs with no address', /without `address`/)
  await no(call('eth_getLogs', [{ address: [LISTED, OTHER] }]), 'eth_getLogs naming another too', /not listed/)
  // Signed transactions: their decoded `to`.
  const account = anvilAccount(1)
  const nonce = Number((await anvil.rpc('eth_getTransactionCount', [account.address, 'pending'])).result)
  const base = { chainId: 31337, gas: 100_000n, maxFeePerGas: 10_000_000_000n, maxPriorityFeePerGas: 1n, nonce }
  const toOther = await account.signTransaction({ ...base, to: OTHER as `0x${string}` })
  await no(call('eth_sendRawTransaction', [toOther]), 'a transaction to another address', /eth_sendRawTransaction's `to` "0x7777/)
  const creation = await account.signTransaction({ ...base, data: '0x00' })
  await no(call('eth_sendRawTransaction', [creation]), 'a contract creation', /creates a contract/)
  await no(call('eth_sendRawTransaction', ['0x1234']), 'a transaction that cannot be decoded', /could not be decoded/)
  const toListed = await account.signTransaction({ ...base, to: LISTED as `0x${string}` })
  const sent = await send(call('eth_sendRawTransaction', [toListed]))
  t.equal(sent.status, 200)
  t.match(sent.json.result, /^0x[0-9a-f]{64}$/, 'a transaction to the listed contract reaches the node')
  // Methods that name no address: the method rule alone.
  await ok(call('eth_blockNumber'), 'eth_blockNumber')
  await ok(call('eth_getBlockByNumber', ['latest', false]), 'a block')
  await ok(call('eth_getTransactionReceipt', [sent.json.result]), 'a receipt')
  // Methods whose addresses a contract rule cannot describe.
  await no(call('eth_simulateV1', [{ blockStateCalls: [] }, 'latest']), 'eth_simulateV1', /cannot check/)
})

t.test('an IP rule and a user-agent rule hold for the request, over HTTP and at the WebSocket upgrade', async (t) => {
  await restrict({ ips: ['10.0.0.0/8', '2001:db8::/32'] })
  await until(async () => (await send(call('eth_chainId'))).status === 403)
  const r = await send(call('eth_chainId'))
  t.equal(r.json.error.code, -32002)
  t.match(r.json.error.message, /IP rule: this key may only be used from 10\.0\.0\.0\/8, 2001:db8::\/32 \(the request came from 127\.0\.0\.1\)/)
  const upgrade = await tryUpgrade(`${wsUrl}?apikey=${key.apiKey}`)
  t.equal(upgrade.status, 403, 'no socket from another address')
  t.equal(upgrade.body?.error?.code, -32002)
  await restrict({ ips: ['10.0.0.0/8', '127.0.0.0/8'] })
  await until(async () => (await send(call('eth_chainId'))).status === 200)
  t.pass('one listed range of several lets the request through (OR)')

  await restrict({ userAgents: ['MyDapp/', 'viem/'] })
  await until(async () => (await send(call('eth_chainId'), { 'user-agent': 'curl/8.0' })).status === 403)
  const ua = await send(call('eth_chainId'), { 'user-agent': 'curl/8.0' })
  t.match(ua.json.error.message, /user-agent rule: the User-Agent must contain one of "MyDapp\/", "viem\/" \(the request sent "curl\/8\.0"\)/)
  t.equal((await send(call('eth_chainId'), { 'user-agent': 'Mozilla/5.0 MyDapp/2.1' })).status, 200)
  t.equal((await tryUpgrade(`${wsUrl}?apikey=${key.apiKey}`, { 'user-agent': 'curl/8.0' })).status, 403)
  const ws = await connectWs(`${wsUrl}?apikey=${key.apiKey}`, { headers: { 'user-agent': 'viem/2.0' } })
  t.equal((await ws.call(call('eth_chainId'))).result, '0x7a69')
  await ws.close()
})

t.test('types are ANDed: a call must pass every rule the key has', async (t) => {
  await restrict({ methods: ['eth_call', 'eth_getBalance'], contracts: [LISTED], userAgents: ['MyDapp/'] })
  const ua = { 'user-agent': 'MyDapp/1' }
  await until(async () => (await send(call('eth_getBalance', [OTHER, 'latest']), ua)).status === 403)
  t.equal((await send(call('eth_getBalance', [LISTED, 'latest']), ua)).status, 200, 'every rule met')
  t.match((await send(call('eth_getBalance', [OTHER, 'latest']), ua)).json.error.message, /contract rule/, 'method ok, contract not')
  t.match((await send(call('eth_getCode', [LISTED, 'latest']), ua)).json.error.message, /method rule/, 'contract ok, method not')
  t.match((await send(call('eth_getBalance', [LISTED, 'latest']), { 'user-agent': 'x' })).json.error.message, /user-agent rule/, 'calls ok, agent not')
})

t.test('over WebSocket: each message meets the method and contract rules, logs subscriptions included', async (t) => {
  await restrict({ methods: ['eth_subscribe', 'eth_chainId'], contracts: [LISTED] })
  await until(async () => (await send(call('eth_blockNumber'))).status === 403)
  const ws = await connectWs(`${wsUrl}?apikey=${key.apiKey}`)
  t.teardown(() => ws.close())
  t.equal((await ws.call(call('eth_blockNumber', [], 1))).error.code, -32002, 'a method the rule refuses')
  const wide = await ws.call(call('eth_subscribe', ['logs', {}], 2))
  t.equal(wide.error.code, -32002, 'a logs subscription without address')
  t.match(wide.error.message, /a logs subscription without `address`/)
  t.equal((await ws.call(call('eth_subscribe', ['logs', { address: OTHER }], 3))).error.code, -32002, 'of another contract')
  const heads = await ws.call(call('eth_subscribe', ['newHeads'], 4))
  t.match(heads.result, /^0x/, 'newHeads names no address: the method rule alone')
  const sub = await ws.call(call('eth_subscribe', ['logs', { address: LISTED }], 5))
  t.match(sub.result, /^0x/, 'a logs subscription of the listed contract')
  // The emit's own block may bring the log before evm_mine returns: the first notification, whenever it came.
  await emitter.emit()
  await anvil.rpc('evm_mine', [])
  const n = await ws.notificationAt(sub.result, 0, 30_000)
  t.equal(n?.params?.result?.address?.toLowerCase(), LISTED, 'and its logs come')
  t.equal((await ws.call(call('eth_unsubscribe', [sub.result], 6))).result, true, 'eth_unsubscribe is never refused')
})

t.test('a refusal is not an invalid key; lifting the rules serves again; a regenerated key keeps them', async (t) => {
  await restrict({ methods: ['eth_chainId'] })
  await until(async () => (await send(call('eth_blockNumber'))).status === 403)
  const bad = await rpc(url, call('eth_blockNumber'), { apiKey: key.apiKey.slice(0, -2) + 'zz' })
  t.equal(bad.status, 401)
  t.equal(bad.json.error.code, -32001)
  const regenerated = await tg.regenerateKey(key.accountId, 0)
  await until(async () => (await rpc(url, call('eth_blockNumber'), { apiKey: regenerated.apiKey })).status === 403)
  t.pass('the new key carries the method rule')
  await tg.restrictKey(key.accountId, {}, true)
  await until(async () => (await rpc(url, call('eth_blockNumber'), { apiKey: regenerated.apiKey })).status === 200)
  t.pass('no rule: served')
  key.apiKey = regenerated.apiKey
  key.keyId = regenerated.keyId
})

t.test('refusals are counted: /metrics by rule and KeyRuleRefused events', async (t) => {
  for (const rule of ['method', 'contract', 'ip', 'user-agent']) {
    t.ok(((await metric(tg.gateway.admin, 'tollgate_key_rule_refusals_total', { rule })) ?? 0) > 0, `${rule} refusals counted`)
  }
  const before = (await metric(tg.gateway.admin, 'tollgate_key_rule_refusals_total', { rule: 'method' }))!
  await restrict({ methods: ['eth_chainId'] })
  await until(async () => (await send(call('eth_blockNumber'))).status === 403)
  await send([call('eth_blockNumber', [], 1), call('eth_gasPrice', [], 2), call('eth_chainId', [], 3)])
  const after = (await metric(tg.gateway.admin, 'tollgate_key_rule_refusals_total', { rule: 'method' }))!
  t.equal(after - before, 1 + 2, 'the single call and each refused call of the batch')
  await tg.stop()
  const refused = await keyRuleRefusedOf(tg.config)
  const total = (rule: string) => refused.filter((e) => e.rule === rule).reduce((n, e) => n + e.count, 0)
  t.equal(total('method'), after, 'the events add up to the metric')
  t.ok(total('contract') > 0 && total('ip') > 0 && total('user-agent') > 0)
  t.ok(
    refused.every((e) => e.network === 'eth-1' && e.accountId === key.accountId),
    'under the network and the account',
  )
  t.ok((await usageEventsOf(tg.config)).length > 0, 'served calls still counted as usage')
})
