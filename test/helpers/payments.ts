import type { Address } from 'viem'
import { parseUnits } from 'viem'
import type { PrivateKeyAccount } from 'viem/accounts'
import { accountIdForWallet } from '../../src/accounts/wallet.js'
import { poolRpc, type ChainRpc } from '../../src/chain/chain-rpc.js'
import type { PaymentsConfig } from '../../src/config/types.js'
import { makeEvent } from '../../src/events/make-event.js'
import type { InvoiceDeps } from '../../src/payments/invoices.js'
import { TokenDecimals } from '../../src/payments/token.js'
import { Upstreams } from '../../src/upstream/upstreams.js'
import type { Anvil } from '../../harness/anvil.js'
import { anvilAccount, chainAt, deployToken, transferToken, type Chain } from './contracts.js'
import type { Ledger } from './ledger.js'

/** A chain with a payment token and another one, a treasury, and wallets that hold tokens. */
export interface PaymentChain {
  chain: Chain
  upstreams: Upstreams
  rpc: ChainRpc
  token: Address
  otherToken: Address
  treasury: Address
  /** anvil accounts 1..4, each holding 20,000 of both tokens. */
  wallets: PrivateKeyAccount[]
  payments(confirmations: number, invoiceTtlMs?: number): PaymentsConfig
}

export async function setUpPaymentChain(t: { teardown(fn: () => unknown): void }, anvil: Anvil, chainId = 31337): Promise<PaymentChain> {
  const chain = chainAt(anvil.url, chainId)
  const owner = anvilAccount(0)
  const token = await deployToken(chain, owner, 'TUSD')
  const otherToken = await deployToken(chain, owner, 'OTHER')
  const wallets = [1, 2, 3, 4].map(anvilAccount)
  for (const w of wallets) {
    await transferToken(chain, token, owner, w.address, parseUnits('20000', 18))
    await transferToken(chain, otherToken, owner, w.address, parseUnits('20000', 18))
  }
  const upstreams = Upstreams.fromConfig({ 'eth-1': { chainId, upstreams: [{ url: anvil.url, kind: 'full', name: 'anvil' }] } })
  t.teardown(() => upstreams.close())
  const treasury: Address = '0x000000000000000000000000000000000000beef'
  return {
    chain,
    upstreams,
    rpc: poolRpc(upstreams.pool('eth-1')!, { timeoutMs: 10_000 }),
    token,
    otherToken,
    treasury,
    wallets,
    payments: (confirmations, invoiceTtlMs = 1_800_000) => ({
      network: 'eth-1',
      token: token.toLowerCase(),
      treasury: treasury.toLowerCase(),
      confirmations,
      invoiceTtlMs,
    }),
  }
}

export function invoiceDeps(ledger: Ledger, pc: PaymentChain, confirmations = 1, rpc: ChainRpc = pc.rpc): InvoiceDeps {
  return { ...ledger, payments: pc.payments(confirmations), rpc, decimals: new TokenDecimals() }
}

/** The account of a wallet, created as the first sign-in does (no plan yet). */
export async function accountFor(ledger: Ledger, wallet: Address): Promise<string> {
  const accountId = accountIdForWallet(wallet)
  await ledger.log.append([makeEvent({ type: 'AccountCreated', accountId, wallet: wallet.toLowerCase() }, ledger.clock.now())])
  await ledger.projector.catchUp()
  return accountId
}

/** The (network, kind) pairs of the test chain. */
export const AVAILABLE = [{ network: 'eth-1', kind: 'full' as const }]
