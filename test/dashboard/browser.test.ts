import t from 'tap'
import { parseUnits } from 'viem'
import type { Page } from 'playwright-core'
import { startAnvil } from '../../harness/anvil.js'
import { rpc, startTestGateway } from '../helpers/gateway.js'
import { ANVIL_KEYS, anvilAccount, chainAt, deployToken, transferToken } from '../helpers/contracts.js'
import { injectTestWallet } from '../helpers/test-wallet.js'
import { ensureDashboardBuilt } from '../helpers/dashboard-build.js'
import { artifactPath, launchChromium } from '../helpers/browser.js'
import { until } from '../helpers/eventually.js'

/*
 * The dashboard end to end in headless Chromium, with an EIP-1193 test wallet injected into the
 * page that signs with an anvil account: connect, sign in, take the Free Trial, see the key and
 * call the gateway with it; pay for Tier 1 (an ERC-20 transfer the wallet sends) and see the
 * plan change; regenerate and see the old key refused. Screenshots of each section are kept in
 * test-artifacts/dashboard/.
 */
const CHAIN = 31337
const dashboardDir = ensureDashboardBuilt()
const anvil = await startAnvil({ chainId: CHAIN })
t.teardown(() => anvil.stop())
const chain = chainAt(anvil.url, CHAIN)
const token = await deployToken(chain, anvilAccount(0))
const treasury = '0x000000000000000000000000000000000000bEEF'
const user = anvilAccount(2)
await transferToken(chain, token, anvilAccount(0), user.address, parseUnits('1000', 18))

const tg = await startTestGateway(t, {
  networks: {
    'eth-1': {
      chainId: CHAIN,
      upstreams: [
        { url: anvil.url, ws: anvil.wsUrl, kind: 'full' },
        { url: anvil.url, kind: 'archive', name: 'archive' },
      ],
    },
  },
  usageIntervalMs: 100,
  config: { payments: { network: 'eth-1', token, treasury, confirmations: 2 } },
})
void dashboardDir
const base = tg.gateway.http
/** Calls the account's keys got served (200): what its usage chart must add up to. */
let served = 0
const callGateway = async (key: string) => {
  const answer = await rpc(tg.url('eth-1'), { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }, { bearer: key })
  if (answer.status === 200) served++
  return answer
}

const browser = await launchChromium(t)
const context = await browser.newContext({ viewport: { width: 1200, height: 900 } })
const page = await context.newPage()
const problems: string[] = []
page.on('console', (m) => m.type() === 'error' && problems.push(m.text()))
page.on('pageerror', (e) => problems.push(String(e)))

// The test wallet: the page's window.ethereum forwards every request to Node, where the user's account signs.
const walletCalls = await injectTestWallet(page, { key: ANVIL_KEYS[2], rpcUrl: anvil.url, chainId: CHAIN })

async function shoot(p: Page, name: string, section?: string): Promise<void> {
  const path = artifactPath('dashboard', `${name}.png`)
  if (section) await p.locator(`#${section}`).screenshot({ path })
  else await p.screenshot({ path, fullPage: true })
}

async function shownKey(): Promise<string> {
  const show = page.getByRole('button', { name: 'Show' })
  if (await show.isVisible()) await show.click()
  const key = await page.locator('[data-field=api-key]').getAttribute('data-key')
  return key ?? ''
}

t.test('signed out: the plans with prices and a Connect wallet button', async (t) => {
  await page.goto(`${base}/`)
  await page.locator('[data-plan=tier-3]').waitFor()
  t.match(await page.locator('[data-plan=tier-1] .price').textContent(), '50 USD / month')
  t.match(await page.locator('#endpoints').textContent(), /Connect your wallet/)
  t.ok(await page.getByRole('button', { name: 'Connect wallet' }).isVisible())
  await shoot(page, '01-signed-out')
})

let trialKey = ''
t.test('connect the wallet, take the Free Trial, see the key, call the gateway with it', async (t) => {
  await page.getByRole('button', { name: 'Connect wallet' }).click()
  await page.locator('[data-field=wallet]').waitFor()
  t.ok(walletCalls.includes('personal_sign'), 'the wallet signed the SIWE message')
  await page.locator('[data-action=choose-free-trial]').click()
  await page.locator('[data-field=plan]', { hasText: 'Free Trial' }).waitFor()
  trialKey = await shownKey()
  t.match(trialKey, /^tg_[A-Za-z0-9]{38}$/)
  const answer = await callGateway(trialKey)
  t.equal(answer.status, 200)
  t.match(answer.json.result, /^0x[0-9a-f]+$/)
  t.match(await page.locator('[data-plan=free-trial] button').textContent(), 'Already used')
  t.match(await page.locator('#endpoints').textContent(), `${base}/http/eth-1`)
  await shoot(page, '02-free-trial')
  await shoot(page, '03-endpoints', 'endpoints')
})

t.test('pay for Tier 1 with the wallet and see the plan change', async (t) => {
  await page.locator('[data-plan=tier-1] [data-node="eth-1:archive"]').check()
  await page.locator('[data-action=choose-tier-1]').click()
  // confirmations: 2, and anvil mines one block per transaction: the page waits for one more.
  await page.locator('[data-msg="plans:tier-1"]', { hasText: 'confirmations: 1 of 2' }).waitFor()
  t.ok(walletCalls.includes('eth_sendTransaction'), 'the wallet sent the token transfer')
  await shoot(page, '04-payment-waiting', 'plans')
  await anvil.rpc('anvil_mine', ['0x1'])
  await page.locator('[data-field=plan]', { hasText: 'Tier 1' }).waitFor({ timeout: 15_000 })
  t.match(await page.locator('[data-msg="plans:tier-1"]').textContent(), 'Payment confirmed')
  t.match(await page.locator('[data-plan=tier-1] .badge').textContent(), /Your plan, until/)
  t.equal(await shownKey(), trialKey, 'the key is kept across the plan change')
  t.equal((await callGateway(trialKey)).status, 200)
  await shoot(page, '05-plans', 'plans')
})

t.test('regenerate the key: the old one is refused', async (t) => {
  await page.locator('[data-action=regenerate]').click()
  await page.locator('[data-msg=key]', { hasText: 'New key issued' }).waitFor()
  const fresh = await shownKey()
  t.not(fresh, trialKey)
  const old = await callGateway(trialKey)
  t.equal(old.status, 401, 'the old key is refused at once')
  t.equal((await callGateway(fresh)).status, 200)
  await shoot(page, '06-subscription', 'subscription')
})

t.test('the usage chart shows the calls', async (t) => {
  const key = await shownKey()
  for (let i = 0; i < 5; i++) await callGateway(key)
  t.ok(served >= 5, `${served} calls served to this account`)
  // Usage reaches the page through the outbox, the log and the projection: reload until it shows
  // (bounded; the assertion below says whether it came).
  await until(async () => {
    await page.reload()
    const text = (await page.locator('[data-field=usage-total]').textContent()) ?? ''
    return Number(text.split(' ')[0]) >= served
  }, 20_000)
  t.match(await page.locator('[data-field=usage-total]').textContent(), new RegExp(`^${served} calls in the last 24 hours`), 'every call served, and no other')
  t.ok((await page.locator('#usage svg rect').count()) > 0, 'bars are drawn')
  await shoot(page, '07-usage', 'usage')
})

t.test('restrictions set in the form: a method rule and a contract rule refuse calls outside them, and the usage counts them by rule', async (t) => {
  const key = await shownKey()
  /** Calls refused by the key's rules, by rule, as the gateway answered them: what the page must show. */
  const refused: Record<string, number> = {}
  const send = async (method: string, params: unknown[]) => {
    const answer = await rpc(tg.url('eth-1'), { jsonrpc: '2.0', id: 1, method, params }, { bearer: key })
    const rule = /key's (method|contract) rule/.exec(answer.json?.error?.message ?? '')?.[1]
    if (answer.status === 403 && rule !== undefined) refused[rule] = (refused[rule] ?? 0) + 1
    if (answer.status === 200) served++
    return answer
  }
  const other = '0x' + '77'.repeat(20)
  const balanceOf = (holder: string) => '0x70a08231' + holder.slice(2).toLowerCase().padStart(64, '0')

  // Over the bound: the API's message is shown, and what was typed is kept.
  const problemsBefore = problems.length
  const tooMany = Array.from({ length: 51 }, (_, i) => '0x' + (i + 1).toString(16).padStart(40, '0')).join('\n')
  await page.locator('#restrict-contracts').fill(tooMany)
  await page.locator('[data-action=save-restrictions]').click()
  await page.locator('[data-msg=restrictions]', { hasText: 'at most 50' }).waitFor()
  t.match(await page.locator('[data-msg=restrictions]').textContent(), /contracts: 51 entries, at most 50/, "the API's refusal, word for word")
  t.equal((await page.locator('#restrict-contracts').inputValue()).split('\n').length, 51, 'the entries typed are kept to be corrected')
  // The browser logs the refused PUT itself (its 400): that one, and nothing else, is expected.
  const logged = problems.splice(problemsBefore)
  t.equal(logged.length, 1, 'only the refused request in the console')
  t.match(logged[0], /status of 400/)
  t.equal((await send('eth_blockNumber', [])).status, 200, 'a refused form changes nothing')

  // One a line and comma-separated both read.
  await page.locator('#restrict-methods').fill('eth_chainId, eth_call\neth_blockNumber')
  await page.locator('#restrict-contracts').fill(token)
  await page.locator('[data-action=save-restrictions]').click()
  await page.locator('[data-msg=restrictions]', { hasText: 'Saved' }).waitFor()
  await shoot(page, '08-restrictions', 'subscription')
  t.same(
    (await page.locator('#restrict-methods').inputValue()).split('\n'),
    ['eth_chainId', 'eth_call', 'eth_blockNumber'],
    'the form shows the rules the key has now',
  )
  t.equal(await page.locator('#restrict-contracts').inputValue(), token.toLowerCase())

  // The rule reaches the call path through the log and the projection (bounded wait on it).
  t.ok(await until(async () => (await send('eth_gasPrice', [])).status === 403), 'the method rule holds')
  const method = await send('eth_gasPrice', [])
  t.equal(method.status, 403, 'a method outside the rule')
  t.equal(method.json.error.code, -32002)
  t.match(method.json.error.message, /method rule: "eth_gasPrice" is not among the methods this key may call/)
  const contract = await send('eth_call', [{ to: other, data: balanceOf(user.address) }, 'latest'])
  t.equal(contract.status, 403, 'a contract outside the rule')
  t.equal(contract.json.error.code, -32002)
  t.match(contract.json.error.message, /contract rule: .*is not listed/)
  const inside = await send('eth_call', [{ to: token, data: balanceOf(user.address) }, 'latest'])
  t.equal(inside.status, 200, 'a listed method to the listed contract passes')
  t.match(inside.json.result, /^0x[0-9a-f]{64}$/)
  t.equal((await send('eth_chainId', [])).status, 200)
  t.ok(refused.method! >= 2 && refused.contract === 1, `refused: ${JSON.stringify(refused)}`)

  // Refusals reach the page as usage does: through the outbox, the log and the projection.
  const shownCount = async (rule: string) =>
    Number(
      (await page
        .locator(`[data-field=refused] [data-rule=${rule}] td`)
        .textContent({ timeout: 1000 })
        .catch(() => '')) || 0,
    )
  await until(async () => {
    await page.reload()
    await page.locator('[data-field=refused]').waitFor()
    return (await shownCount('method')) >= refused.method! && (await shownCount('contract')) >= refused.contract!
  }, 20_000)
  t.equal(await shownCount('method'), refused.method, 'the method refusals, each once')
  t.equal(await shownCount('contract'), refused.contract, 'the contract refusals')
  t.equal(await page.locator('[data-field=refused] [data-rule]').count(), 2, 'no other rule refused anything')
  await shoot(page, '09-refused', 'usage')

  // Lifted from the form: every box empty.
  for (const id of ['methods', 'contracts']) await page.locator(`#restrict-${id}`).fill('')
  await page.locator('[data-action=save-restrictions]').click()
  await page.locator('[data-msg=restrictions]', { hasText: 'No restrictions' }).waitFor()
  t.ok(await until(async () => (await send('eth_gasPrice', [])).status === 200), 'lifted')
})

t.test('on a phone', async (t) => {
  await page.setViewportSize({ width: 390, height: 844 })
  await page.reload()
  await page.locator('[data-field=plan]').waitFor()
  const overflow = await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth')
  t.equal(overflow, 0, 'nothing wider than the screen')
  await shoot(page, '10-phone')
  t.same(problems, [], 'no error in the page console (CSP, scripts)')
})
