import t from 'tap'
import { readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { encodeFunctionData, erc20Abi, type Hex } from 'viem'
import { rpc } from '../helpers/gateway.js'
import { ensureDashboardBuilt } from '../helpers/dashboard-build.js'
import { artifactPath, launchChromium } from '../helpers/browser.js'
import { startDev } from '../helpers/dev-process.js'
import { injectTestWallet } from '../helpers/test-wallet.js'

/*
 * The seed's flow on `tollgate dev` as a newcomer tries it (`npm start`): with what dev printed
 * (the devnet's RPC URL and chain id, a dev account's key, the test USD token), a browser wallet
 * connects on the dashboard, signs in, pays Tier 1 in test USD and gets a key that the gateway
 * serves. Headless Chromium, the wallet injected into the page as in browser.test.ts.
 */
t.setTimeout(300_000)
ensureDashboardBuilt()
const dataDir = await mkdtemp(join(tmpdir(), 'tollgate-dev-pay-'))
t.teardown(() => rm(dataDir, { recursive: true, force: true }))
const dev = await startDev(t, dataDir)
const printed = {
  dashboard: /Dashboard: (http:\/\/\S+?)\/? /.exec(dev.banner)?.[1],
  endpoint: /HTTP endpoint: (\S+)/.exec(dev.banner)?.[1],
  rpcUrl: /RPC URL (http:\/\/\S+?),/.exec(dev.banner)?.[1],
  chainId: Number(/chain id (\d+)/.exec(dev.banner)?.[1]),
  account: /account (0x[0-9a-fA-F]{40})/.exec(dev.banner)?.[1],
  key: /private key (0x[0-9a-f]{64})/.exec(dev.banner)?.[1] as Hex | undefined,
  token: /token (0x[0-9a-fA-F]{40})/.exec(dev.banner)?.[1] as Hex | undefined,
}

/** An eth_call on the devnet itself (not through the gateway), its result as a number. */
async function callToken(data: Hex): Promise<bigint> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_call', params: [{ to: printed.token, data }, 'latest'] })
  const answer = (await (await fetch(printed.rpcUrl!, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).json()) as { result: Hex }
  return BigInt(answer.result)
}
const balanceOf = (holder: string) => callToken(encodeFunctionData({ abi: erc20Abi, functionName: 'balanceOf', args: [holder as Hex] }))

t.test('dev prints how to pay from a browser wallet, and its devnet has the test USD it names', async (t) => {
  t.match(printed, {
    dashboard: /^http:\/\/127\.0\.0\.1:\d+$/,
    rpcUrl: /^http:\/\/127\.0\.0\.1:\d+$/,
    chainId: 31337,
    account: /^0x/,
    key: /^0x/,
    token: /^0x/,
  })
  t.equal(await callToken(encodeFunctionData({ abi: erc20Abi, functionName: 'decimals' })), 6n, '6 decimals')
  t.equal(await balanceOf(printed.account!), 1_000_000n * 10n ** 6n, 'the printed account holds 1,000,000 test USD')
  const config = JSON.parse(readFileSync(join(dataDir, 'config.json'), 'utf8'))
  t.match(config.payments, { network: 'dev-1', token: printed.token, confirmations: 1 }, 'the written config pays in it, at one confirmation')
})

t.test('a browser wallet with the printed key pays Tier 1 on the dashboard, and its key is served', async (t) => {
  const { treasury } = JSON.parse(readFileSync(join(dataDir, 'config.json'), 'utf8')).payments as { treasury: string }
  const before = await balanceOf(treasury)
  const browser = await launchChromium(t)
  const page = await (await browser.newContext({ viewport: { width: 1200, height: 900 } })).newPage()
  const problems: string[] = []
  page.on('pageerror', (e) => problems.push(String(e)))
  const walletCalls = await injectTestWallet(page, { key: printed.key!, rpcUrl: printed.rpcUrl!, chainId: printed.chainId })

  await page.goto(`${printed.dashboard}/`)
  await page.getByRole('button', { name: 'Connect wallet' }).click()
  await page.locator('[data-field=wallet]').waitFor()
  t.ok(walletCalls.includes('personal_sign'), 'the wallet signed the sign-in message')
  await page.locator('[data-plan=tier-1] [data-node="dev-1:full"]').check()
  await page.locator('[data-action=choose-tier-1]').click()
  await page.locator('[data-field=plan]', { hasText: 'Tier 1' }).waitFor({ timeout: 60_000 })
  t.ok(walletCalls.includes('eth_sendTransaction'), 'the wallet sent the test USD transfer')
  t.match(await page.locator('[data-msg="plans:tier-1"]').textContent(), 'Payment confirmed')
  await page.locator(`[data-plan=tier-1] .badge`).waitFor()
  await page.locator('#plans').screenshot({ path: artifactPath('dashboard-dev', 'tier-1-paid.png') })
  t.equal((await balanceOf(treasury)) - before, 50n * 10n ** 6n, "the treasury got Tier 1's 50 USD, in 6 decimals")

  const show = page.getByRole('button', { name: 'Show' })
  if (await show.isVisible()) await show.click()
  const key = (await page.locator('[data-field=api-key]').getAttribute('data-key')) ?? ''
  t.match(key, /^tg_/)
  const answer = await rpc(printed.endpoint!, { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }, { bearer: key })
  t.equal(answer.status, 200, 'the key of the paid plan is served')
  t.same(problems, [], 'no error in the page')
})

t.test('dev stops cleanly on Ctrl-C', async (t) => {
  t.equal(await dev.stop(), 0)
})
