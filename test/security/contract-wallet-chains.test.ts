import t from 'tap'
import type { Address } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { startAnvil } from '../../harness/anvil.js'
import { startApiGateway } from '../helpers/api-gateway.js'
import { erc1271WalletRuntime } from '../helpers/contracts.js'

// A contract wallet is an address on one chain. The same address on another chain can hold
// another contract with another owner (a counterfactual wallet deployed there by someone else, a
// factory replayed on a new chain). Before, the signature was checked on the chain the message
// named and the account found by address alone: whoever controlled the address on any chain the
// gateway serves signed in to the account and read its key. Two real anvils (chains 31337 and
// 31338) hold ERC-1271 wallets at one address, with different owners; a real gateway serves both.

const other = await startAnvil({ chainId: 31338 })
t.teardown(() => other.stop())
const { anvil, freshIp, call, siweMessage, signIn } = await startApiGateway(t, {
  networks: { 'eth-2': { chainId: 31338, upstreams: [{ url: other.url, kind: 'full' }] } },
})

const wallet: Address = '0x00000000000000000000000000000000c0ffee01'
const owner = privateKeyToAccount(generatePrivateKey())
const stranger = privateKeyToAccount(generatePrivateKey())
await anvil.rpc('anvil_setCode', [wallet, erc1271WalletRuntime(owner.address)])
await other.rpc('anvil_setCode', [wallet, erc1271WalletRuntime(stranger.address)])

/** Sign in as the contract wallet on `chainId`, the signature by `signer` (the key the wallet there vouches for). */
async function walletSignIn(chainId: number, signer: typeof owner): Promise<{ status: number; json: any; cookie: string }> {
  const message = await siweMessage(wallet, { chainId })
  const out = await call(freshIp(), 'POST', '/api/siwe/verify', { message, signature: await signer.signMessage({ message }) })
  return { ...out, cookie: (out.headers.get('set-cookie') ?? '').split(';')[0]! }
}

t.test("the wallet's account is bound to the chain it was created on; the same address on another chain is refused", async (t) => {
  const created = await walletSignIn(31337, owner)
  t.equal(created.status, 200, 'the owner signs up on chain 31337')
  const accountId = created.json.accountId

  const foreign = await walletSignIn(31338, stranger)
  t.equal(foreign.status, 403, "the other chain's wallet vouches for its own owner: refused")
  t.equal(foreign.json.error.code, 'ACCOUNT_ON_OTHER_CHAIN')
  t.match(foreign.json.error.message, /chain 31337/, 'the message names the chain to sign in on')
  t.equal(foreign.cookie, '', 'no session')

  const again = await walletSignIn(31337, owner)
  t.equal(again.status, 200, 'the owner still signs in on its chain')
  t.equal(again.json.accountId, accountId)
  t.equal((await walletSignIn(31338, owner)).status, 401, "the owner's key is nothing to the other chain's wallet")
})

t.test("an EOA's key is its own on every chain", async (t) => {
  const alice = privateKeyToAccount(generatePrivateKey())
  t.equal((await signIn(alice, { chainId: 31337 })).status, 200)
  t.equal((await signIn(alice, { chainId: 31338 })).status, 200)
})
