import t, { type Test } from 'tap'
import { createSiweMessage } from 'viem/siwe'
import { padHex, serializeErc6492Signature, type Address } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { FakeClock } from '../helpers/fake-clock.js'
import { startAnvil } from '../../harness/anvil.js'
import { anvilAccount, chainAt, counterfactualWallet, deployErc1271Wallet, deployRuntime, GAS_BURNER_RUNTIME } from '../helpers/contracts.js'
import { openLedger } from '../helpers/ledger.js'
import { TEST_SECRET } from '../helpers/gateway.js'
import { Upstreams } from '../../src/upstream/upstreams.js'
import { poolRpc, type ChainRpc } from '../../src/chain/chain-rpc.js'
import { SiweNonces } from '../../src/siwe/nonces.js'
import { SessionTokens } from '../../src/siwe/session-tokens.js'
import { signIn, type SignInDeps } from '../../src/siwe/sign-in.js'
import { SiweError } from '../../src/accounts/errors.js'
import { accountIdForWallet } from '../../src/accounts/wallet.js'

/*
 * Sign-In with Ethereum against a real anvil (chain 31337) reached through the gateway's own
 * upstream pool: EOAs by recovery, a deployed ERC-1271 wallet (hand-assembled bytecode, see
 * test/helpers/contracts.ts) and an undeployed one by ERC-6492 (viem's universal validator).
 */
const DOMAIN = 'dash.example.com'
const ORIGIN = 'https://dash.example.com'
const CHAIN = 31337

const anvil = await startAnvil({ chainId: CHAIN })
t.teardown(() => anvil.stop())
const upstreams = Upstreams.fromConfig({ 'eth-1': { chainId: CHAIN, upstreams: [{ url: anvil.url, kind: 'full', name: 'anvil' }] } })
t.teardown(() => upstreams.close())
const poolCalls = poolRpc(upstreams.pool('eth-1')!, { timeoutMs: 10_000 })
/** Every call the sign-ins made to the node, in order (the real pool answers them). */
const calls: Array<{ method: string; params: unknown[] }> = []
const rpc: ChainRpc = {
  network: poolCalls.network,
  request(method, params) {
    calls.push({ method, params })
    return poolCalls.request(method, params)
  },
}
const methodsSince = (from: number) => calls.slice(from).map((c) => c.method)
const chain = chainAt(anvil.url, CHAIN)

const clock = new FakeClock(Date.now())
const ledger = await openLedger(t, { clock })
const nonces = new SiweNonces(TEST_SECRET)
const deps: SignInDeps = {
  ...ledger,
  nonces,
  expect: { domain: DOMAIN, origin: ORIGIN, chainIds: [CHAIN] },
  rpcFor: (id) => (id === CHAIN ? rpc : undefined),
  signatureGas: 1_000_000,
  tokens: new SessionTokens(TEST_SECRET),
  sessionTtlMs: 3_600_000,
}

const alice = anvilAccount(1)

function message(over: Partial<Parameters<typeof createSiweMessage>[0]> = {}): string {
  return createSiweMessage({
    domain: DOMAIN,
    address: alice.address,
    statement: 'Sign in to the Tollgate dashboard.',
    uri: `${ORIGIN}/`,
    version: '1',
    chainId: CHAIN,
    nonce: nonces.issue(clock.now()),
    issuedAt: new Date(clock.now()),
    expirationTime: new Date(clock.now() + 600_000),
    ...over,
  })
}

async function refused(t: Test, work: Promise<unknown>, code: string): Promise<void> {
  const err = await work.then(
    () => undefined,
    (e: unknown) => e,
  )
  t.ok(err instanceof SiweError, `refused with a SiweError (${(err as Error)?.message})`)
  t.equal((err as SiweError).code, code)
}

t.test('a first sign-in creates the account and opens a session; a second one signs in to it', async (t) => {
  const text = message()
  const session = await signIn(deps, { message: text, signature: await alice.signMessage({ message: text }) })
  t.equal(session.accountId, accountIdForWallet(alice.address))
  t.equal(session.created, true)
  t.equal(session.expiresAt, clock.now() + 600_000, "the message's Expiration Time ends the session, before sessionTtlMs")
  t.match(session.token, /^[0-9a-z]+\.[A-Za-z0-9_-]{43}\.[A-Za-z0-9_-]{16}$/, 'expiry, 32 random bytes, MAC')
  t.ok(ledger.store.account(session.accountId), 'AccountCreated projected')

  const again = message()
  const second = await signIn(deps, { message: again, signature: await alice.signMessage({ message: again }) })
  t.equal(second.created, false)
  t.equal(second.accountId, session.accountId)
  t.not(second.token, session.token)
})

t.test('a replayed message is refused, and so is the same message sent twice at once', async (t) => {
  const text = message()
  const signature = await alice.signMessage({ message: text })
  await signIn(deps, { message: text, signature })
  await refused(t, signIn(deps, { message: text, signature }), 'NONCE_USED')

  const twice = message()
  const sig2 = await alice.signMessage({ message: twice })
  const results = await Promise.allSettled([signIn(deps, { message: twice, signature: sig2 }), signIn(deps, { message: twice, signature: sig2 })])
  t.equal(results.filter((r) => r.status === 'fulfilled').length, 1, 'exactly one of two concurrent submissions opens a session')
  const loser = results.find((r) => r.status === 'rejected') as PromiseRejectedResult
  t.equal((loser.reason as SiweError).code, 'NONCE_USED')
})

t.test('another domain, another URI, an unserved chain are refused', async (t) => {
  for (const [over, code] of [
    [{ domain: 'evil.example.com' }, 'WRONG_DOMAIN'],
    [{ domain: 'dash.example.com:8443' }, 'WRONG_DOMAIN'],
    [{ uri: 'https://evil.example.com/' }, 'WRONG_URI'],
    [{ chainId: 1 }, 'WRONG_CHAIN'],
  ] as const) {
    const text = message(over)
    await refused(t, signIn(deps, { message: text, signature: await alice.signMessage({ message: text }) }), code)
  }
})

t.test('expired, too old, not yet valid, and foreign or expired nonces are refused', async (t) => {
  const expired = message({ expirationTime: new Date(clock.now() - 1000) })
  await refused(t, signIn(deps, { message: expired, signature: await alice.signMessage({ message: expired }) }), 'MESSAGE_EXPIRED')
  const old = message({ issuedAt: new Date(clock.now() - 3_600_000), expirationTime: undefined })
  await refused(t, signIn(deps, { message: old, signature: await alice.signMessage({ message: old }) }), 'MESSAGE_EXPIRED')
  const future = message({ issuedAt: new Date(clock.now() + 3_600_000) })
  await refused(t, signIn(deps, { message: future, signature: await alice.signMessage({ message: future }) }), 'NOT_YET_VALID')
  const foreign = message({ nonce: new SiweNonces('another deployment secret').issue(clock.now()) })
  await refused(t, signIn(deps, { message: foreign, signature: await alice.signMessage({ message: foreign }) }), 'BAD_NONCE')

  const later = message({ expirationTime: undefined })
  clock.advance(5.5 * 60_000) // past the nonce's 5 minutes (the message itself is still young enough)
  await refused(t, signIn(deps, { message: later, signature: await alice.signMessage({ message: later }) }), 'NONCE_EXPIRED')
})

t.test('a bad signature, another signer, or an edited message are refused', async (t) => {
  const bob = anvilAccount(2)
  const byBob = message()
  await refused(t, signIn(deps, { message: byBob, signature: await bob.signMessage({ message: byBob }) }), 'BAD_SIGNATURE')
  await refused(t, signIn(deps, { message: message(), signature: '0x' + '11'.repeat(65) }), 'BAD_SIGNATURE')
  await refused(t, signIn(deps, { message: message(), signature: 'not hex' }), 'BAD_SIGNATURE')
  const text = message()
  const signature = await alice.signMessage({ message: text })
  await refused(t, signIn(deps, { message: text.replace('Sign in to', 'Sign into'), signature }), 'BAD_SIGNATURE')
  // A line the parser skips must not ride along unnoticed.
  await refused(t, signIn(deps, { message: `${text}\nTransfer all funds: yes`, signature }), 'BAD_MESSAGE')
  await refused(t, signIn(deps, { message: 'hello', signature }), 'BAD_MESSAGE')
})

t.test('a nonce is spent by its first attempt: after a failed one, even the right signature is refused', async (t) => {
  const text = message()
  await refused(t, signIn(deps, { message: text, signature: '0x' + '22'.repeat(65) }), 'BAD_SIGNATURE')
  await refused(t, signIn(deps, { message: text, signature: await alice.signMessage({ message: text }) }), 'NONCE_USED')
  const fresh = message()
  t.equal((await signIn(deps, { message: fresh, signature: await alice.signMessage({ message: fresh }) })).accountId, accountIdForWallet(alice.address))
})

t.test('a deployed ERC-1271 contract wallet signs in through our node', async (t) => {
  const owner = anvilAccount(3)
  const wallet: Address = await deployErc1271Wallet(chain, anvilAccount(0), owner.address)
  t.not((await anvil.rpc('eth_getCode', [wallet, 'latest'])).result, '0x', 'the wallet is deployed')
  const text = message({ address: wallet })
  // The owner's key signs; the wallet contract vouches for it (isValidSignature).
  const session = await signIn(deps, { message: text, signature: await owner.signMessage({ message: text }) })
  t.equal(session.wallet, wallet.toLowerCase())

  const stranger = message({ address: wallet })
  await refused(t, signIn(deps, { message: stranger, signature: await anvilAccount(4).signMessage({ message: stranger }) }), 'BAD_SIGNATURE')
})

t.test('an undeployed (counterfactual) wallet signs in with an ERC-6492 signature', async (t) => {
  const owner = anvilAccount(4)
  const { address, factory, factoryData } = counterfactualWallet(owner.address)
  t.equal((await anvil.rpc('eth_getCode', [address, 'latest'])).result, '0x', 'not deployed')
  const text = message({ address })
  const signature = serializeErc6492Signature({ address: factory, data: factoryData, signature: await owner.signMessage({ message: text }) })
  const session = await signIn(deps, { message: text, signature })
  t.equal(session.wallet, address.toLowerCase())
  t.equal((await anvil.rpc('eth_getCode', [address, 'latest'])).result, '0x', 'checking it deployed nothing (an eth_call)')
})

t.test("an EOA's junk signature costs one eth_getCode and no eth_call; an EOA's own signature costs nothing", async (t) => {
  const from = calls.length
  await refused(t, signIn(deps, { message: message(), signature: '0x' + '33'.repeat(65) }), 'BAD_SIGNATURE')
  t.same(methodsSince(from), ['eth_getCode'])
  const text = message()
  const mark = calls.length
  await signIn(deps, { message: text, signature: await alice.signMessage({ message: text }) })
  t.same(methodsSince(mark), [], 'recovered locally')
})

t.test("a contract wallet's check is one eth_call with the gas cap, after the guard; a refusing guard stops it", async (t) => {
  const owner = anvilAccount(3)
  const wallet = await deployErc1271Wallet(chain, anvilAccount(0), owner.address, padHex('0x05', { size: 32 }))
  let checks = 0
  const guarded: SignInDeps = {
    ...deps,
    guards: { contractCheck: () => void checks++, walletCheck: () => {}, mayCreateAccount: () => {}, createsAccount: () => {} },
  }
  const from = calls.length
  await refused(t, signIn(guarded, { message: message({ address: wallet }), signature: '0x' + '44'.repeat(65) }), 'BAD_SIGNATURE')
  t.same(methodsSince(from), ['eth_getCode', 'eth_call'])
  t.equal((calls.at(-1)!.params[0] as { gas: string }).gas, '0xf4240', 'gas: 1,000,000')
  t.equal(checks, 1)

  const stop = new Error('limited')
  const refusing: SignInDeps = {
    ...deps,
    guards: {
      contractCheck: () => {
        throw stop
      },
      walletCheck: () => {},
      mayCreateAccount: () => {},
      createsAccount: () => {},
    },
  }
  const mark = calls.length
  const err = await signIn(refusing, { message: message({ address: wallet }), signature: '0x' + '55'.repeat(65) }).catch((e: unknown) => e)
  t.equal(err, stop, "the guard's refusal is the answer")
  t.same(methodsSince(mark), ['eth_getCode'], 'no eth_call')
})

t.test('a wallet whose check burns all its gas is refused at the gas cap', async (t) => {
  const burner = await deployRuntime(chain, anvilAccount(0), GAS_BURNER_RUNTIME)
  t.not((await anvil.rpc('eth_getCode', [burner, 'latest'])).result, '0x')
  await refused(t, signIn(deps, { message: message({ address: burner }), signature: '0x' + '66'.repeat(65) }), 'BAD_SIGNATURE')
  t.equal((calls.at(-1)!.params[0] as { gas: string }).gas, '0xf4240')
})

t.test("the signature is checked before the account's stream is read; a new account is asked for and counted once it holds", async (t) => {
  const steps: string[] = []
  const log = ledger.log
  const reading: SignInDeps = {
    ...deps,
    // The same log, its account reads written down: a junk signature must not reach them.
    log: new Proxy(log, {
      get(target, prop) {
        if (prop === 'readAccount') {
          return (id: string, after?: number) => {
            steps.push('read')
            return target.readAccount(id, after)
          }
        }
        const value: unknown = Reflect.get(target, prop, target)
        return typeof value === 'function' ? value.bind(target) : value
      },
    }),
    guards: {
      contractCheck: () => void steps.push('contract'),
      walletCheck: () => void steps.push('wallet'),
      mayCreateAccount: () => void steps.push('may'),
      createsAccount: () => void steps.push('creates'),
    },
  }
  const newcomer = privateKeyToAccount(generatePrivateKey())
  const junk = message({ address: newcomer.address })
  await refused(t, signIn(reading, { message: junk, signature: '0x' + '77'.repeat(65) }), 'BAD_SIGNATURE')
  t.same(steps, ['wallet'], "a junk signature: the wallet's limit before the node is asked, then nothing of the account")
  steps.length = 0
  const text = message({ address: newcomer.address })
  t.equal((await signIn(reading, { message: text, signature: await newcomer.signMessage({ message: text }) })).created, true)
  t.same(steps.slice(0, 3), ['read', 'may', 'creates'], "the wallet's own key: no limit of the wallet; the account is read, then counted as new")
  steps.length = 0
  const again = message({ address: newcomer.address })
  await signIn(reading, { message: again, signature: await newcomer.signMessage({ message: again }) })
  t.notOk(steps.includes('may') || steps.includes('creates'), 'an existing account asks nothing')
})

// Last: it freezes the node.
t.test('a node that does not answer a signature check: CHAIN_UNAVAILABLE at the time-out, not a wait', async (t) => {
  const wallet = await deployErc1271Wallet(chain, anvilAccount(0), anvilAccount(3).address, padHex('0x06', { size: 32 }))
  const quick = poolRpc(upstreams.pool('eth-1')!, { timeoutMs: 300, deadlineMs: 300 })
  const text = message({ address: wallet })
  await anvil.freeze()
  t.teardown(() => anvil.thaw())
  await refused(t, signIn({ ...deps, rpcFor: () => quick }, { message: text, signature: '0x' + '88'.repeat(65) }), 'CHAIN_UNAVAILABLE')
})
