// CPU per verification check (src/proofs), on answers of a real anvil: one block of about 130
// transactions (token transfers with a log each), eth_getProof of an account and of a contract
// with two slots. Run: node --import tsx bench/verify-costs.ts. Prints one JSON line per check.
import { startAnvil } from '../harness/anvil.js'
import { verifyReceiptsRoot, verifyTransactionsRoot } from '../src/proofs/block-body.js'
import { verifyHeader } from '../src/proofs/header.js'
import { bloomMayMatch } from '../src/proofs/log-bloom.js'
import { verifyStateProof } from '../src/proofs/state-proof.js'
import { verifyTransaction, verifyTransactionSender } from '../src/proofs/transaction-encoding.js'
import { makeBusyChain } from '../test/helpers/busy-chain.js'

const PER_BLOCK = 200

async function cpuMicros(label: string, iterations: number, fn: () => unknown): Promise<void> {
  for (let i = 0; i < Math.min(20, iterations); i++) await fn() // warm the JIT
  const start = process.cpuUsage()
  for (let i = 0; i < iterations; i++) await fn()
  const used = process.cpuUsage(start)
  console.log(JSON.stringify({ check: label, iterations, cpuMicrosEach: Math.round(((used.user + used.system) / iterations) * 10) / 10 }))
}

const anvil = await startAnvil()
try {
  const busy = await makeBusyChain(anvil)
  const call = async (method: string, params: unknown[]): Promise<any> => (await anvil.rpc(method, params)).result
  const [from] = await call('eth_accounts', [])
  await call('evm_setAutomine', [false])
  const batch = Array.from({ length: PER_BLOCK }, (_, i) => ({
    jsonrpc: '2.0',
    id: i,
    method: 'eth_sendTransaction',
    params: [{ from, to: busy.emitter, data: `0x${i.toString(16).padStart(64, '0')}`, gas: '0x10000' }],
  }))
  await fetch(anvil.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(batch) })
  await call('evm_mine', [])
  await call('evm_setAutomine', [true])
  const block = await call('eth_getBlockByNumber', ['latest', true])
  const receipts = await call('eth_getBlockReceipts', ['latest'])
  // anvil fills a block with what its pool releases (127 of 200 here): the checks are measured on what it mined.
  const n = block.transactions.length
  const eoaProof = await call('eth_getProof', [busy.eoa, [], 'latest'])
  const tokenProof = await call('eth_getProof', [busy.token, [busy.slots.totalSupply, busy.slots.balanceOfDelegated], 'latest'])
  const absentProof = await call('eth_getProof', [busy.absent, [], 'latest'])

  await cpuMicros('header hash (prague header)', 2000, () => verifyHeader(block))
  await cpuMicros('account proof (existing EOA)', 500, () => verifyStateProof(eoaProof, block.stateRoot))
  await cpuMicros('account proof (absent account)', 500, () => verifyStateProof(absentProof, block.stateRoot))
  await cpuMicros('account proof + 2 storage proofs (ERC-20)', 500, () => verifyStateProof(tokenProof, block.stateRoot))
  await cpuMicros('one transaction hash (1559)', 2000, () => verifyTransaction(block.transactions[0]))
  await cpuMicros('one transaction sender (secp256k1 recovery)', 300, () =>
    verifyTransactionSender(block.transactions[0], verifyTransaction(block.transactions[0])),
  )
  await cpuMicros(`transactionsRoot of ${n} transactions (hashes checked)`, 30, () => verifyTransactionsRoot(block, block.transactions))
  await cpuMicros(`receiptsRoot of ${n} receipts (a log each)`, 30, () => verifyReceiptsRoot(block, receipts))
  await cpuMicros('bloom test (address and one topic)', 20000, () => bloomMayMatch(block.logsBloom, { address: busy.token, topics: [busy.slots.unset] }))
} finally {
  await anvil.stop()
}
