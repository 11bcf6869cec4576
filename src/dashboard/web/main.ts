import { api, type Invoice, type Me, type PublicConfig, type Usage } from './api'
import { h } from './dom'
import { renderEndpoints } from './endpoints'
import { renderPlans } from './plans'
import { newState, say, type Actions } from './state'
import { renderSubscription } from './subscription'
import { renderUsage } from './usage-chart'
import { connectWallet, ensureChain, hasWallet, onWalletChange, sendTokenTransfer, signMessage, siweMessage, walletChainId } from './wallet'
import { ApiFailure, WalletFailure } from './errors'

const state = newState()
/** How often a payment that waits for the chain is checked again. */
const PAYMENT_POLL_MS = 2_000

function errorText(err: unknown): string {
  if (err instanceof ApiFailure || err instanceof WalletFailure) return err.message
  return `Something went wrong: ${(err as Error)?.message ?? String(err)}`
}

function render(): void {
  renderWallet()
  renderPlans(state, actions)
  renderEndpoints(state)
  renderSubscription(state, actions)
  renderUsage(state)
}

function renderWallet(): void {
  const box = document.getElementById('wallet')!
  const me = state.me
  const busy = state.busy.has('signin')
  const msg = state.messages.get('signin')
  box.replaceChildren(
    ...(me
      ? [
          h('span', { class: 'address', title: me.wallet, 'data-field': 'wallet' }, `${me.wallet.slice(0, 6)}…${me.wallet.slice(-4)}`),
          h('button', { type: 'button', class: 'secondary small', onclick: () => actions.signOut() }, 'Sign out'),
        ]
      : [
          h(
            'button',
            { type: 'button', class: 'primary', disabled: busy, 'data-action': 'connect', onclick: () => actions.connect() },
            busy ? 'Waiting for your wallet…' : 'Connect wallet',
          ),
        ]),
  )
  const notice = document.getElementById('notice')!
  notice.textContent = msg?.text ?? ''
  notice.className = `notice ${msg?.kind ?? ''}`
}

async function loadMe(): Promise<void> {
  if (!(await api.get<{ signedIn: boolean }>('/api/session')).data.signedIn) {
    state.me = null
    state.usage = null
    return
  }
  try {
    state.me = (await api.get<Me>('/api/me')).data
  } catch (err) {
    if (err instanceof ApiFailure && err.status === 401) state.me = null
    else throw err
  }
  state.usage = state.me ? (await api.get<Usage>('/api/usage?hours=24')).data : null
  resumePayments()
}

async function busy(where: string, work: () => Promise<void>): Promise<void> {
  if (state.busy.has(where)) return
  state.busy.add(where)
  state.messages.delete(where)
  render()
  try {
    await work()
  } catch (err) {
    say(state, where, errorText(err), 'error')
  } finally {
    state.busy.delete(where)
    render()
  }
}

const actions: Actions = {
  render,
  connect: () =>
    busy('signin', async () => {
      if (!hasWallet())
        throw new WalletFailure('No browser wallet found: install one (MetaMask, Rabby, Coinbase Wallet…) or open this page in your wallet app’s browser.')
      const address = await connectWallet()
      const served = state.config!.networks.map((n) => n.chainId)
      const walletChain = await walletChainId()
      // The message names a chain we serve: a contract wallet is checked on that chain.
      const chainId = served.includes(walletChain) ? walletChain : (state.config!.payments?.chainId ?? served[0]!)
      const { nonce } = (await api.post<{ nonce: string }>('/api/siwe/nonce')).data
      say(state, 'signin', 'Sign the message in your wallet to sign in (it costs nothing).')
      render()
      const message = siweMessage(address, chainId, nonce, state.config!.siwe.sessionTtlMs)
      const signature = await signMessage(address, message)
      await api.post('/api/siwe/verify', { message, signature })
      state.address = address
      await loadMe()
      say(state, 'signin', 'Signed in.', 'ok')
    }),
  signOut: () =>
    busy('signin', async () => {
      await api.post('/api/siwe/logout')
      state.me = null
      state.usage = null
      state.showKey = false
      state.drafts.clear()
      say(state, 'signin', 'Signed out.', 'ok')
    }),
  choosePlan: (planId) =>
    busy(`plans:${planId}`, async () => {
      const where = `plans:${planId}`
      const out = (
        await api.post<{ invoice?: Invoice; activated?: boolean; requested?: boolean }>('/api/plans', { planId, nodes: state.choices.get(planId) ?? [] })
      ).data
      if (out.activated) {
        await loadMe()
        say(state, where, 'Your plan is active: your key is under My Subscription.', 'ok')
        return
      }
      if (out.requested) {
        await loadMe()
        say(state, where, 'Request recorded: the operator will set up your node.', 'ok')
        return
      }
      const invoice = out.invoice!
      const payments = state.config!.payments!
      await ensureChain(invoice.chainId, invoice.network)
      say(state, where, `Confirm the payment of ${invoice.amountUsd} USD in your wallet.`)
      render()
      const txHash = await sendTokenTransfer(state.me!.wallet as `0x${string}`, invoice.token, invoice.treasury, invoice.amount)
      localStorage.setItem(pendingKey(invoice.invoiceId), txHash)
      say(state, where, `Payment sent; waiting for ${payments.confirmations} confirmation${payments.confirmations === 1 ? '' : 's'}…`)
      render()
      await waitForPayment(where, invoice, txHash)
    }),
  regenerate: (graceSeconds) =>
    busy('key', async () => {
      await api.post('/api/keys/regenerate', { graceSeconds })
      await loadMe()
      say(
        state,
        'key',
        graceSeconds === 0 ? 'New key issued; the old one no longer works.' : 'New key issued; the old one keeps working for the time you chose.',
        'ok',
      )
    }),
  saveDomains: (text) =>
    busy('domains', async () => {
      const domains = text.split(/[\s,]+/).filter(Boolean)
      await api.put('/api/keys/domains', { domains })
      await loadMe()
      say(state, 'domains', domains.length === 0 ? 'Any web site may use this key now.' : 'Saved.', 'ok')
    }),
  saveRestrictions: (restrictions) =>
    busy('restrictions', async () => {
      // A refusal (an entry the gateway cannot read, too many entries) keeps what was typed: busy() shows its message.
      await api.put('/api/keys/restrictions', restrictions)
      for (const name of [...state.drafts.keys()]) if (name.startsWith('restrictions:')) state.drafts.delete(name)
      await loadMe()
      const none = Object.values(restrictions).every((list) => list === undefined || list.length === 0)
      say(
        state,
        'restrictions',
        none ? 'No restrictions: the key may be used for anything its plan allows.' : 'Saved: calls outside these rules are refused.',
        'ok',
      )
    }),
}

function pendingKey(invoiceId: string): string {
  return `tollgate.payment.${invoiceId}`
}

/** Ask the gateway to check the payment until it is accepted or refused for good. */
async function waitForPayment(where: string, invoice: Pick<Invoice, 'invoiceId' | 'planId' | 'nodes'>, txHash: string): Promise<void> {
  let invoiceId = invoice.invoiceId
  let carried = false
  for (;;) {
    let waitMs = PAYMENT_POLL_MS
    try {
      await api.post(`/api/invoices/${invoiceId}/payment`, { txHash })
      localStorage.removeItem(pendingKey(invoiceId))
      await loadMe()
      say(state, where, 'Payment confirmed: your plan is active.', 'ok')
      return
    } catch (err) {
      if (err instanceof ApiFailure && err.code === 'INVOICE_EXPIRED' && !carried) {
        // Mined after the invoice expired: the gateway recorded it, and a new invoice of the same
        // plan takes the same transaction (at today's terms): the user must not pay twice.
        carried = true
        localStorage.removeItem(pendingKey(invoiceId))
        invoiceId = (await api.post<{ invoice: Invoice }>('/api/plans', { planId: invoice.planId, nodes: invoice.nodes })).data.invoice.invoiceId
        localStorage.setItem(pendingKey(invoiceId), txHash)
        say(state, where, 'The invoice expired before your payment was mined: applying the same payment to a new invoice…')
        render()
        continue
      }
      // 429: checked too often (another tab polls too); ask again when the gateway says.
      const limited = err instanceof ApiFailure && err.status === 429
      if (!(err instanceof ApiFailure) || (err.status !== 202 && !limited)) {
        if (err instanceof ApiFailure && err.status !== 0 && err.status < 500) localStorage.removeItem(pendingKey(invoiceId))
        throw err
      }
      if (limited) waitMs = Math.max(PAYMENT_POLL_MS, Number(err.details.retryAfterSeconds ?? 0) * 1000)
      say(state, where, err.message)
      render()
    }
    await new Promise((r) => setTimeout(r, waitMs))
  }
}

/** A payment sent before the page was closed is checked again when it opens. */
function resumePayments(): void {
  for (const invoice of state.me?.invoices ?? []) {
    const txHash = localStorage.getItem(pendingKey(invoice.invoiceId))
    if (txHash === null) continue
    if (invoice.status !== 'unpaid' && invoice.status !== 'expired') {
      localStorage.removeItem(pendingKey(invoice.invoiceId))
      continue
    }
    const where = `plans:${invoice.planId}`
    if (state.busy.has(where)) continue
    void busy(where, () => waitForPayment(where, invoice, txHash))
  }
}

async function start(): Promise<void> {
  render()
  try {
    state.config = (await api.get<PublicConfig>('/api/config')).data
    await loadMe()
  } catch (err) {
    say(state, 'signin', errorText(err), 'error')
  }
  render()
  // Another wallet account is another account: sign in again.
  onWalletChange(() => {
    if (state.me && state.address && state.me.wallet !== state.address.toLowerCase()) void actions.signOut()
  })
}

void start()
