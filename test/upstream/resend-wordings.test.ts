import t from 'tap'
import { keccak256 } from 'viem/utils'
import { startAnvil } from '../../harness/anvil.js'
import { startFaultProxy } from '../helpers/fault-proxy.js'
import { rpc, startTestGateway } from '../helpers/gateway.js'

// The re-send rules read each client's own words for "I have this transaction" and "its nonce is
// used" (docs/heavy-calls.md has the table and its sources). A real anvil holds the transactions;
// the fault proxy in front of it answers eth_sendRawTransaction as another client words it, so
// each wording is tried on a transaction the node knows (the client gets its hash) and on one it
// does not (the client gets the node's error as it came).

const anvil = await startAnvil()
t.teardown(() => anvil.stop())
const proxy = await startFaultProxy(anvil)
t.teardown(() => proxy.close())
const tg = await startTestGateway(t, { networks: { 'eth-1': { chainId: 31337, upstreams: [{ url: proxy.url, kind: 'full' }] } } })
const { apiKey } = await tg.createKey('tier-3')
const [from, to] = (await anvil.rpc('eth_accounts')).result as string[]
let value = 0

/** A new transfer signed by anvil's first account (a new value each time: a new hash), at this nonce. */
async function sign(nonce: number): Promise<string> {
  const tx = { from, to, value: `0x${(++value).toString(16)}`, nonce: `0x${nonce.toString(16)}`, gas: '0x5208', gasPrice: '0x77359400' }
  return (await anvil.rpc('eth_signTransaction', [tx])).result
}
const nonceNow = async () => parseInt((await anvil.rpc('eth_getTransactionCount', [from, 'latest'])).result, 16)
const send = (raw: string, id: number) => rpc(tg.url('eth-1'), { jsonrpc: '2.0', id, method: 'eth_sendRawTransaction', params: [raw] }, { apiKey })

/** Wordings that say "this nonce is used" or "not accepted": the hash only when a node knows this very transaction. */
const USED: Array<[client: string, error: { code: number; message: string }]> = [
  ['geth', { code: -32000, message: 'nonce too low: next nonce 5, tx nonce 4' }],
  ['Besu', { code: -32001, message: 'Nonce too low' }],
  ['Nethermind', { code: -32010, message: 'OldNonce, Current nonce: 5, nonce of rejected tx: 4' }],
  ['Ganache, a used nonce', { code: -32000, message: "the tx doesn't have the correct nonce. account has nonce of: 5 tx has nonce of: 4" }],
  ['Ganache, a re-send in its pool', { code: -32003, message: 'transaction underpriced' }],
  ['geth, a replacement', { code: -32000, message: 'replacement transaction underpriced' }],
]
/** Wordings that say "I have it": the hash whatever the lookup finds. */
const KNOWN: Array<[client: string, error: { code: number; message: string }]> = [
  ['geth, Erigon, reth', { code: -32000, message: 'already known' }],
  ['anvil', { code: -32003, message: 'transaction already imported' }],
  ['Besu', { code: -32000, message: 'Known transaction' }],
  ['Nethermind', { code: -32010, message: 'AlreadyKnown' }],
]

t.test('a transaction the node knows, re-sent: its hash, whatever the client calls it', async (t) => {
  t.teardown(() => proxy.clear())
  let id = 0
  for (const [client, error] of [...USED, ...KNOWN]) {
    const raw = await sign(await nonceNow())
    proxy.clear()
    t.equal((await send(raw, ++id)).json.result, keccak256(raw as `0x${string}`), `${client}: sent once, mined`)
    proxy.set('eth_sendRawTransaction', { answerError: error })
    const again = await send(raw, ++id)
    t.same(again.json, { jsonrpc: '2.0', id, result: keccak256(raw as `0x${string}`) }, `${client}: "${error.message}" answers the hash`)
  }
})

t.test('a transaction no node knows keeps the node error of a used nonce', async (t) => {
  t.teardown(() => proxy.clear())
  let id = 100
  for (const [client, error] of USED) {
    const raw = await sign((await nonceNow()) + 7) // never sent, never mined
    proxy.set('eth_sendRawTransaction', { answerError: error })
    const r = await send(raw, ++id)
    t.same(r.json, { jsonrpc: '2.0', id, error }, `${client}: the node's own error`)
  }
})
