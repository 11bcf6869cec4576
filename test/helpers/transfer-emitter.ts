import type { Anvil } from '../../harness/anvil.js'

/** What the helpers need of a node: calls straight to it (anvil, or another implementation). */
type Node = Pick<Anvil, 'rpc'>

/** keccak256("Transfer(address,address,uint256)"): the event a token transfer emits. */
export const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef'

/**
 * Runtime code that emits LOG1(TRANSFER_TOPIC) with empty data on every call:
 * PUSH32 topic, PUSH1 0 (size), PUSH1 0 (offset), LOG1, STOP.
 */
const RUNTIME = `7f${TRANSFER_TOPIC.slice(2)}60006000a100`
/** Init code: CODECOPY the runtime (0x27 bytes at offset 0x0b) to memory and RETURN it. */
const INIT = `0x602780600b6000396000f3${RUNTIME}`

/**
 * Deploy the emitter with anvil's first (unlocked) account, straight to the node, and return
 * its address and a function that makes it emit one event (the transaction hash).
 */
export async function deployTransferEmitter(anvil: Node): Promise<{ address: string; emit(): Promise<string> }> {
  const from = (await anvil.rpc('eth_accounts')).result[0] as string
  const sent = await anvil.rpc('eth_sendTransaction', [{ from, data: INIT, gas: '0x30000' }])
  if (!sent.result) throw new Error(`deploy failed: ${JSON.stringify(sent.error)}`)
  const receipt = await waitReceipt(anvil, sent.result)
  const address = receipt.contractAddress as string
  return {
    address,
    async emit() {
      const tx = await anvil.rpc('eth_sendTransaction', [{ from, to: address, gas: '0x10000' }])
      if (!tx.result) throw new Error(`call failed: ${JSON.stringify(tx.error)}`)
      return tx.result as string
    },
  }
}

/** The receipt, polling at most 15 s (blocks come every second with --block-time 1). */
export async function waitReceipt(anvil: Node, hash: string): Promise<any> {
  const end = Date.now() + 15_000
  while (Date.now() < end) {
    const r = await anvil.rpc('eth_getTransactionReceipt', [hash])
    if (r.result) return r.result
    await new Promise((res) => setTimeout(res, 100))
  }
  throw new Error(`no receipt for ${hash} within 15 s`)
}
