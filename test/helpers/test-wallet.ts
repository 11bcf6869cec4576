import { createWalletClient, http, type Hex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import type { Page } from 'playwright-core'

/**
 * An EIP-1193 browser wallet injected into `page` (window.ethereum) that signs with `key` and
 * sends its transactions to the node at `rpcUrl`: each request of the page goes to Node, where
 * the account signs it as a wallet extension would. Resolves with the methods the page asked of
 * it, in order (the list grows as the page goes on). Call it before the page loads.
 * @example
 * const walletCalls = await injectTestWallet(page, { key: ANVIL_KEYS[2], rpcUrl: anvil.url, chainId: 31337 })
 */
export async function injectTestWallet(page: Page, opts: { key: Hex; rpcUrl: string; chainId: number }): Promise<string[]> {
  const account = privateKeyToAccount(opts.key)
  const wallet = createWalletClient({
    account,
    chain: { id: opts.chainId, name: 'devnet', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [opts.rpcUrl] } } },
    transport: http(opts.rpcUrl),
  })
  const calls: string[] = []
  await page.exposeFunction('__testWallet', async (method: string, params: unknown[]) => {
    calls.push(method)
    switch (method) {
      case 'eth_requestAccounts':
      case 'eth_accounts':
        return [account.address]
      case 'eth_chainId':
        return `0x${opts.chainId.toString(16)}`
      case 'personal_sign':
        return account.signMessage({ message: { raw: params[0] as Hex } })
      case 'wallet_switchEthereumChain':
        return null
      case 'eth_sendTransaction': {
        const tx = params[0] as { to: Hex; data: Hex }
        return wallet.sendTransaction({ to: tx.to, data: tx.data })
      }
      default: {
        const answer = (await (
          await fetch(opts.rpcUrl, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
          })
        ).json()) as { result?: unknown; error?: { message: string } }
        if (answer.error) throw new Error(answer.error.message)
        return answer.result
      }
    }
  })
  // As the page's own script text, not a function of this file: the file runs under tsx, whose
  // transform names functions with a helper the page does not have.
  await page.addInitScript('window.ethereum = { isTestWallet: true, request: ({ method, params }) => window.__testWallet(method, params ?? []), on() {} }')
  return calls
}
