import t from 'tap'
import { verifyTransaction, verifyTransactionSender } from '../../src/proofs/transaction-encoding.js'
import type { RpcTransaction } from '../../src/proofs/rpc-shapes.js'

// A 1559 transaction whose tip is above its fee cap, as Ganache 7.9.2 signs its own once the base
// fee falls below its 1 gwei default tip (taken from a real Ganache, the second transaction of a
// fresh chain with deterministic accounts). viem refuses to encode one; the chain holds it.
const ganacheTx = {
  type: '0x2',
  hash: '0x0e26f2bc1166016d6cfc7e7f5a679a40f7d53784b685985b98c652aa35ba0c2b',
  chainId: '0x539',
  nonce: '0x1',
  blockHash: '0x5f0d96755f5e2cf69b670f5fa96e1776326704f6222a62248512a6812052b967',
  blockNumber: '0x3',
  transactionIndex: '0x0',
  from: '0x90f8bf6a479f320ead074411a4b0e7944ea8c9c1',
  to: '0xffcf8fdee72ac11b5c542428b35eef5769c409f0',
  value: '0x1234',
  maxPriorityFeePerGas: '0x3b9aca00',
  maxFeePerGas: '0x3290fbcc',
  gasPrice: '0x3290fbcc',
  gas: '0x15f90',
  input: '0x',
  accessList: [],
  v: '0x0',
  r: '0xf45761b124dc2dcce26bf10dd426d2edaf7aab0185c063e0ad0f64e60b694c4c',
  s: '0x37eb408ff9be7c83f111ec0ee97a4f19f8e59e045d00bb090bbd3aa1e02d98ba',
  yParity: '0x0',
} as unknown as RpcTransaction

t.test('its fields hash to its hash, and its signature recovers its sender', async (t) => {
  const encoded = verifyTransaction(ganacheTx)
  t.equal(encoded[0], 2, 'type 2')
  await t.resolves(verifyTransactionSender(ganacheTx, encoded))
})

t.test('altered, it fails as any transaction does', async (t) => {
  t.throws(() => verifyTransaction({ ...ganacheTx, value: '0x1235' } as RpcTransaction), { code: 'TRANSACTION_HASH' })
  const encoded = verifyTransaction(ganacheTx)
  await t.rejects(verifyTransactionSender({ ...ganacheTx, from: '0xffcf8fdee72ac11b5c542428b35eef5769c409f0' } as RpcTransaction, encoded), {
    code: 'TRANSACTION_SENDER',
  })
})
