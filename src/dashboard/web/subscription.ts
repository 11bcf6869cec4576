import { copyButton, date, fill, h, masked } from './dom'
import type { Invoice } from './api'
import { messageOf } from './message'
import { restrictionsForm } from './restrictions'
import type { Actions, AppState } from './state'

const GRACE_CHOICES: Array<[number, string]> = [
  [0, 'Stop the old key now (it leaked)'],
  [3600, 'Keep the old key working 1 hour'],
  [86400, 'Keep the old key working 24 hours'],
  [7 * 86400, 'Keep the old key working 7 days'],
]

export function renderSubscription(state: AppState, actions: Actions): void {
  const me = state.me
  if (!me) return fill('subscription', h('p', { class: 'hint' }, 'Connect your wallet to see your plan and your API key.'))
  const plan = me.plan
  const status = !plan
    ? 'No plan yet: choose one under Plans.'
    : plan.active
      ? plan.endsAt
        ? `Active until ${date(plan.endsAt)}`
        : 'Active'
      : `Ended on ${date(plan.endsAt!)}: renew it under Plans`
  const nodes = me.nodes.length > 0 ? me.nodes.map((n) => `${n.network} ${n.kind}`).join(', ') : plan ? 'All the plan includes' : '—'
  const key = me.key
  const graceSelect = h('select', { id: 'grace', 'aria-describedby': 'grace-help' }, ...GRACE_CHOICES.map(([s, text]) => h('option', { value: s }, text)))
  const domains = h(
    'textarea',
    { id: 'domains', rows: 3, placeholder: 'app.example.com\n*.example.org', 'aria-describedby': 'domains-help', spellcheck: 'false' },
    (key?.domains ?? []).join('\n'),
  )
  fill(
    'subscription',
    h(
      'dl',
      { class: 'facts-list' },
      h('dt', {}, 'Wallet'),
      h('dd', {}, h('code', {}, me.wallet)),
      h('dt', {}, 'Plan'),
      h('dd', { 'data-field': 'plan' }, plan ? plan.name : 'None'),
      h('dt', {}, 'Status'),
      h('dd', { 'data-field': 'status' }, status),
      h('dt', {}, 'Nodes'),
      h('dd', {}, nodes),
    ),
    h('h3', {}, 'API key'),
    key
      ? h(
          'div',
          {},
          h(
            'div',
            { class: 'line' },
            h(
              'code',
              { class: 'key', 'data-field': 'api-key', 'data-key': state.showKey ? key.apiKey : null },
              state.showKey ? key.apiKey : masked(key.apiKey),
            ),
            h(
              'button',
              {
                type: 'button',
                class: 'secondary small',
                'aria-pressed': state.showKey ? 'true' : 'false',
                onclick: () => {
                  state.showKey = !state.showKey
                  actions.render()
                },
              },
              state.showKey ? 'Hide' : 'Show',
            ),
            copyButton(key.apiKey, 'Copy the API key'),
          ),
          h('p', { class: 'hint' }, `Issued ${date(key.issuedAt)}.`),
          me.previousKey
            ? h(
                'p',
                { class: 'msg info', 'data-field': 'previous-key' },
                `Your previous key (…${me.previousKey.ending}) keeps working until ${date(me.previousKey.worksUntil)}.`,
              )
            : null,
          h('h3', {}, 'Regenerate'),
          h(
            'p',
            { class: 'hint', id: 'grace-help' },
            'A new key is issued. If the old one leaked, stop it now; for a planned rotation, give your apps time to switch.',
          ),
          h(
            'div',
            { class: 'line wrap' },
            h('label', { for: 'grace', class: 'sr-only' }, 'When the old key stops'),
            graceSelect,
            h(
              'button',
              {
                type: 'button',
                class: 'danger',
                disabled: state.busy.has('key'),
                'data-action': 'regenerate',
                onclick: () => actions.regenerate(Number(graceSelect.value)),
              },
              'Regenerate key',
            ),
          ),
          messageOf(state, 'key'),
          h('h3', {}, 'Allowed domains'),
          h('label', { for: 'domains' }, 'Web sites that may use this key, one per line (empty: any)'),
          domains,
          h(
            'p',
            { class: 'hint', id: 'domains-help' },
            'For keys used in web pages: calls from other sites’ pages are refused (the Origin or Referer header is checked). This does not stop programs outside a browser, which can send any header they like: keep your key secret anyway.',
          ),
          h(
            'button',
            {
              type: 'button',
              class: 'secondary',
              disabled: state.busy.has('domains'),
              'data-action': 'save-domains',
              onclick: () => actions.saveDomains(domains.value),
            },
            'Save domains',
          ),
          messageOf(state, 'domains'),
          restrictionsForm(state, actions, key.restrictions ?? {}),
        )
      : h('p', { class: 'hint' }, 'You have no API key yet: it is issued when a plan starts.'),
    me.invoices.length > 0 ? invoices(state) : null,
  )
}

function invoiceStatus(i: Invoice): string {
  const late = i.latePayments.length === 0 ? '' : ' (a payment arrived after it expired: it is recorded, a new invoice takes it)'
  return (i.status === 'unpaid' ? 'Not paid' : i.status === 'expired' ? 'Expired' : 'Paid') + late
}

function invoices(state: AppState): HTMLElement {
  return h(
    'details',
    { class: 'invoices' },
    h('summary', {}, 'Invoices'),
    h(
      'table',
      {},
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          h('th', { scope: 'col' }, 'Date'),
          h('th', { scope: 'col' }, 'Plan'),
          h('th', { scope: 'col' }, 'Amount'),
          h('th', { scope: 'col' }, 'Status'),
        ),
      ),
      h(
        'tbody',
        {},
        ...state.me!.invoices.map((i) =>
          h('tr', {}, h('td', {}, date(i.createdAt)), h('td', {}, i.planName), h('td', {}, `${i.amountUsd} USD`), h('td', {}, invoiceStatus(i))),
        ),
      ),
    ),
  )
}
