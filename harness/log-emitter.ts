import type { Anvil } from './anvil.js'
import { receiptOf } from './anvil.js'

/** keccak-256 of "Emitted(bytes)": the topic every log of the emitter carries. */
export const EMITTED_TOPIC = '0x' + 'e1'.repeat(32)

/**
 * Runtime: copy the calldata to memory and LOG1 it with EMITTED_TOPIC.
 *   CALLDATASIZE PUSH1 0 PUSH1 0 CALLDATACOPY PUSH32 topic CALLDATASIZE PUSH1 0 LOG1 STOP
 */
const RUNTIME = `3660006000377f${EMITTED_TOPIC.slice(2)}366000a100`
/** Init: CODECOPY the runtime (44 bytes at offset 12) to memory and RETURN it. */
const INIT = `0x602c600c600039602c6000f3${RUNTIME}`

/**
 * Deploy a contract that emits one log per call (its calldata as data), straight to the node.
 * @returns the contract address
 */
export async function deployLogEmitter(anvil: Anvil): Promise<{ address: string; from: string }> {
  const [from] = (await anvil.rpc('eth_accounts')).result as string[]
  const hash = (await anvil.rpc('eth_sendTransaction', [{ from, data: INIT }])).result as string
  const receipt = await receiptOf(anvil, hash)
  if (!receipt?.contractAddress) throw new Error(`log emitter not deployed: ${JSON.stringify(receipt)}`)
  return { address: receipt.contractAddress, from }
}

/**
 * Fill the chain with logs: `blocks` blocks of `perBlock` logs each, every one followed by `gap`
 * empty blocks (so that a range is wide and sparse, like a real contract's history).
 * @returns the total number of logs emitted
 */
export async function emitLogs(
  anvil: Anvil,
  emitter: { address: string; from: string },
  opts: { blocks: number; perBlock: number; gap: number },
): Promise<number> {
  await anvil.rpc('evm_setAutomine', [false])
  let n = 0
  for (let b = 0; b < opts.blocks; b++) {
    const batch = Array.from({ length: opts.perBlock }, () => ({
      jsonrpc: '2.0',
      id: n,
      method: 'eth_sendTransaction',
      params: [{ from: emitter.from, to: emitter.address, data: '0x' + (n++).toString(16).padStart(64, '0'), gas: '0x10000' }],
    }))
    const res = await fetch(anvil.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(batch) })
    const answers = (await res.json()) as Array<{ error?: unknown }>
    const failed = answers.find((a) => a.error)
    if (failed) throw new Error(`emit failed: ${JSON.stringify(failed.error)}`)
    await anvil.rpc('evm_mine')
    if (opts.gap > 0) await anvil.rpc('anvil_mine', [`0x${opts.gap.toString(16)}`])
  }
  await anvil.rpc('evm_setAutomine', [true])
  return n
}

/**
 * Runtime: copy the calldata to memory and LOG0 it (a log with no topics, as an anonymous event).
 *   CALLDATASIZE PUSH1 0 PUSH1 0 CALLDATACOPY CALLDATASIZE PUSH1 0 LOG0 STOP
 */
const ANONYMOUS_RUNTIME = '366000600037366000a000'
/** Init: CODECOPY the runtime (11 bytes at offset 12) to memory and RETURN it. */
const ANONYMOUS_INIT = `0x600b600c600039600b6000f3${ANONYMOUS_RUNTIME}`

/**
 * Deploy a contract that emits one log with no topics per call (its calldata as data), straight
 * to the node: the log that filters with trailing wildcards match on some clients and not others.
 * @returns the contract address
 */
export async function deployAnonymousLogEmitter(anvil: Anvil): Promise<{ address: string; from: string }> {
  const [from] = (await anvil.rpc('eth_accounts')).result as string[]
  const hash = (await anvil.rpc('eth_sendTransaction', [{ from, data: ANONYMOUS_INIT }])).result as string
  const receipt = await receiptOf(anvil, hash)
  if (!receipt?.contractAddress) throw new Error(`anonymous log emitter not deployed: ${JSON.stringify(receipt)}`)
  return { address: receipt.contractAddress, from }
}

/**
 * One block of the given calls to log emitters, in order (automine off while they are sent), so a
 * test gets logs of one topic and of none side by side in one block: the shape where clients'
 * matching rules differ on trailing wildcards. Returns the block's number.
 * @example await mineLogsBlock(anvil, one.from, [[one.address, '0x01'], [anon.address, '0x02']])
 */
export async function mineLogsBlock(anvil: Anvil, from: string, calls: readonly (readonly [to: string, data: string])[]): Promise<number> {
  await anvil.rpc('evm_setAutomine', [false])
  for (const [to, data] of calls) await anvil.rpc('eth_sendTransaction', [{ from, to, data, gas: '0x10000' }])
  await anvil.rpc('evm_mine')
  await anvil.rpc('evm_setAutomine', [true])
  return Number((await anvil.rpc('eth_blockNumber')).result)
}
