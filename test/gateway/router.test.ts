import t from 'tap'
import { oldestBlockOf, route, type RouteContext } from '../../src/gateway/router.js'
import { METHODS } from '../../src/rpc/method-table.js'

const both: RouteContext = {
  access: { full: true, archive: true },
  healthy: { full: true, archive: true },
  hasArchive: true,
  head: 1000,
  windowBlocks: 128,
  planName: 'Tier 3',
}
const fullOnly: RouteContext = { ...both, access: { full: true, archive: false }, planName: 'Free Trial' }
const r = (method: string, params: unknown[], ctx = both) => route(method, METHODS[method], params, ctx)

t.test('trace_* goes to archive nodes, or is refused with -32601 saying why', async (t) => {
  t.same(r('trace_block', ['0x1']), { kind: 'archive' })
  const refused = r('trace_transaction', ['0xab'], fullOnly)
  t.match(refused, { refuse: 'METHOD_NOT_FOUND', message: /trace_\* needs an archive node; the Free Trial plan has none/ })
})

t.test('state older than the window goes to archive nodes', async (t) => {
  t.same(r('eth_getBalance', ['0xa', '0x1']), { kind: 'archive' })
  t.same(r('eth_getBalance', ['0xa', 'earliest']), { kind: 'archive' })
  t.same(r('eth_getBalance', ['0xa', { blockNumber: '0x10' }]), { kind: 'archive' }, 'EIP-1898 by number')
  t.same(r('eth_getBalance', ['0xa', `0x${(1000 - 128).toString(16)}`]), { kind: 'full' }, 'at the window edge: full')
  t.same(r('eth_getBalance', ['0xa', `0x${(1000 - 129).toString(16)}`]), { kind: 'archive' }, 'one past it: archive')
  t.same(r('eth_call', [{}, 'latest']), { kind: 'full' })
  t.same(r('eth_call', [{}, { blockHash: '0xabc' }]), { kind: 'full' }, 'by hash: full first')
  t.same(r('eth_getStorageAt', ['0xa', '0x0', '0x5']), { kind: 'archive' }, 'block parameter at index 2')
  t.same(r('eth_getLogs', [{ fromBlock: '0x1', toBlock: 'latest' }]), { kind: 'archive' }, 'getLogs from an old block')
  t.same(r('eth_getLogs', [{ fromBlock: 'latest' }]), { kind: 'full' })
  t.same(r('eth_blockNumber', []), { kind: 'full' })
})

t.test('old state without archive access gets a clear refusal', async (t) => {
  t.match(r('eth_getBalance', ['0xa', '0x1'], fullOnly), {
    refuse: 'ARCHIVE_REQUIRED',
    message: /block 1 is older than the 128 blocks full nodes keep \(head 1000\); the Free Trial plan has no archive access/,
  })
})

t.test('an unknown head sends everything but trace_* to full nodes', async (t) => {
  t.same(r('eth_getBalance', ['0xa', '0x1'], { ...both, head: undefined }), { kind: 'full' })
})

t.test('archive nodes stand in when no full node is healthy, or the key has only archive access', async (t) => {
  t.same(r('eth_blockNumber', [], { ...both, healthy: { full: false, archive: true } }), { kind: 'archive' })
  t.same(r('eth_blockNumber', [], { ...both, access: { full: false, archive: true } }), { kind: 'archive' })
  t.same(r('eth_blockNumber', [], { ...fullOnly, healthy: { full: false, archive: true } }), { kind: 'full' }, 'not without archive access')
})

t.test('a network without archive nodes: old state goes to its full nodes, trace_* is refused', async (t) => {
  const noArchive = { ...both, hasArchive: false, healthy: { full: true, archive: false } }
  t.same(r('eth_getBalance', ['0xa', '0x1'], noArchive), { kind: 'full' })
  t.match(r('trace_block', ['0x1'], noArchive), { refuse: 'METHOD_NOT_FOUND', message: /trace_block needs an archive node, and this network has none/ })
})

t.test('oldest block of a call', async (t) => {
  t.equal(oldestBlockOf(METHODS.eth_getLogs, [{ fromBlock: '0x20', toBlock: '0x10' }]), 16)
  t.equal(oldestBlockOf(METHODS.eth_getLogs, [{ blockHash: '0xab' }]), undefined)
  t.equal(oldestBlockOf(METHODS.eth_getBalance, ['0xa']), undefined, 'absent: latest')
  t.equal(oldestBlockOf(METHODS.eth_getBalance, ['0xa', 'safe']), undefined)
})
