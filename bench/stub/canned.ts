/**
 * Canned JSON-RPC results for the stub upstream. The large one looks like a real
 * `eth_getBlockReceipts` answer (hashes, addresses, logs, blooms from a seeded PRNG) so that
 * gzip compresses it about as much as a node's answer, not like a run of zeros.
 */

import { prng } from '../lib/prng.js'

function hex(rand: () => number, bytes: number): string {
  let s = '0x'
  for (let i = 0; i < bytes; i++)
    s += Math.floor(rand() * 256)
      .toString(16)
      .padStart(2, '0')
  return s
}

/** A bloom filter is mostly zero bits with a few set: like a real one, it compresses well. */
function bloom(rand: () => number): string {
  const b = new Array<string>(256).fill('00')
  for (let i = 0; i < 12; i++)
    b[Math.floor(rand() * 256)] = Math.floor(rand() * 256)
      .toString(16)
      .padStart(2, '0')
  return '0x' + b.join('')
}

/** The JSON text of a receipts array of at least `minBytes` (about 1 MB by default). */
export function blockReceiptsJson(minBytes = 1_000_000): string {
  const rand = prng(42)
  const blockHash = hex(rand, 32)
  const blockNumber = '0x13a5f2c'
  // A block has a few hot contracts (tokens, routers): addresses and topics repeat, as on chain.
  const contracts = Array.from({ length: 24 }, () => hex(rand, 20))
  const topics = Array.from({ length: 16 }, () => hex(rand, 32))
  const receipts: string[] = []
  let size = 2
  let cumulativeGas = 0
  let logIndex = 0
  for (let i = 0; size < minBytes; i++) {
    const txHash = hex(rand, 32)
    const gasUsed = 21_000 + Math.floor(rand() * 300_000)
    cumulativeGas += gasUsed
    const logs: string[] = []
    const nLogs = Math.floor(rand() * 6)
    for (let l = 0; l < nLogs; l++) {
      const t = [topics[Math.floor(rand() * topics.length)], hex(rand, 32), hex(rand, 32)]
      logs.push(
        JSON.stringify({
          address: contracts[Math.floor(rand() * contracts.length)],
          topics: t,
          data: hex(rand, 32 * (1 + Math.floor(rand() * 4))),
          blockNumber,
          transactionHash: txHash,
          transactionIndex: '0x' + i.toString(16),
          blockHash,
          logIndex: '0x' + (logIndex++).toString(16),
          removed: false,
        }),
      )
    }
    const receipt = JSON.stringify({
      blockHash,
      blockNumber,
      contractAddress: null,
      cumulativeGasUsed: '0x' + cumulativeGas.toString(16),
      effectiveGasPrice: '0x' + (1_000_000_000 + Math.floor(rand() * 9e9)).toString(16),
      from: hex(rand, 20),
      gasUsed: '0x' + gasUsed.toString(16),
      logs: '__LOGS__',
      logsBloom: bloom(rand),
      status: '0x1',
      to: contracts[Math.floor(rand() * contracts.length)],
      transactionHash: txHash,
      transactionIndex: '0x' + i.toString(16),
      type: '0x2',
    }).replace('"__LOGS__"', `[${logs.join(',')}]`)
    receipts.push(receipt)
    size += receipt.length + 1
  }
  return `[${receipts.join(',')}]`
}

/** Result JSON by method; anything else is answered with -32601. */
export function cannedResults(largeBytes = 1_000_000): Record<string, string> {
  return {
    eth_blockNumber: '"0x13a5f2c"',
    eth_chainId: '"0x1"',
    net_version: '"1"',
    eth_gasPrice: '"0x3b9aca00"',
    eth_getBalance: '"0x1bc16d674ec80000"',
    eth_call: '"0x00000000000000000000000000000000000000000000000000000000000f4240"',
    eth_getBlockReceipts: blockReceiptsJson(largeBytes),
    debug_traceCall: '{"gas":21000,"failed":false,"returnValue":"","structLogs":[]}',
  }
}
