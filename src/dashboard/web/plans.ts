import type { PublicConfig } from './api'
import { date, fill, h } from './dom'
import { messageOf } from './message'
import type { Actions, AppState } from './state'

type Plan = PublicConfig['plans'][number]

function price(plan: Plan): string {
  if (plan.priceUsdPerMonth === null) return plan.how === 'free' ? 'Free' : 'On request'
  return `${plan.priceFrom ? 'from ' : ''}${plan.priceUsdPerMonth} USD / month`
}

function rps(value: number | null): string {
  return value === null ? 'unlimited' : value === 0 ? 'none' : `${value} req/s`
}

function period(plan: Plan): string {
  if (plan.periodMs === null) return 'no end'
  const hours = plan.periodMs / 3_600_000
  return hours < 48 ? `${hours} hours` : `${Math.round(hours / 24)} days`
}

function nodesText(plan: Plan): string {
  switch (plan.nodes.rule) {
    case 'all-full':
      return 'All full nodes'
    case 'all':
      return 'All full and archive nodes'
    case 'choose':
      return `${plan.nodes.count} node${plan.nodes.count === 1 ? '' : 's'} of your choice`
    case 'dedicated':
      return 'A dedicated node'
  }
}

export function renderPlans(state: AppState, actions: Actions): void {
  const config = state.config
  if (!config) return fill('plans', h('p', {}, 'Loading the plans…'))
  const me = state.me
  const intro = me ? null : h('p', { class: 'hint' }, 'Connect your wallet to choose a plan. Your account is your wallet address: no e-mail, no password.')
  const unavailable =
    config.payments === null
      ? h('p', { class: 'msg info', 'data-msg': 'payments' }, 'Paid plans are unavailable on this gateway: it has no payment settings. The free trial works.')
      : null
  fill('plans', intro, unavailable, h('div', { class: 'cards' }, ...config.plans.map((plan) => planCard(state, actions, plan))))
}

function planCard(state: AppState, actions: Actions, plan: Plan): HTMLElement {
  const config = state.config!
  const me = state.me
  const current = me?.plan?.id === plan.id && me.plan.active ? me.plan : null
  const used = me?.freePlansUsed.includes(plan.id) ?? false
  const busy = state.busy.has(`plans:${plan.id}`)
  const requested = plan.how === 'request' && me?.privateNode?.requestedAt

  let label: string
  let disabled = !me || busy
  if (plan.how === 'free') {
    label = used ? 'Already used' : 'Start free trial'
    disabled ||= used
  } else if (plan.how === 'pay') {
    label = `${current ? 'Renew: pay' : 'Pay'} ${plan.priceUsdPerMonth} USD`
    disabled ||= config.payments === null
  } else {
    label = requested ? 'Requested' : 'Request a private node'
    disabled ||= Boolean(requested)
  }
  if (busy) label = 'Working…'

  return h(
    'article',
    { class: `card${current ? ' current' : ''}`, 'aria-labelledby': `plan-${plan.id}`, 'data-plan': plan.id },
    h('h3', { id: `plan-${plan.id}` }, plan.name),
    current ? h('p', { class: 'badge' }, `Your plan${current.endsAt ? `, until ${date(current.endsAt)}` : ''}`) : null,
    h('p', { class: 'price' }, price(plan)),
    h('p', {}, plan.description),
    h(
      'ul',
      { class: 'facts' },
      h('li', {}, nodesText(plan)),
      h('li', {}, `Full nodes: ${rps(plan.limits.fullRps)}`),
      h('li', {}, `Archive nodes: ${rps(plan.limits.archiveRps)}`),
      h('li', {}, `Period: ${period(plan)}`),
    ),
    plan.nodes.rule === 'choose' && me ? nodeChoice(state, actions, plan) : null,
    requested ? h('p', { class: 'hint' }, `Requested on ${date(requested)}. The operator sets up your node and attaches it to your account.`) : null,
    h('button', { type: 'button', class: 'primary', disabled, 'data-action': `choose-${plan.id}`, onclick: () => actions.choosePlan(plan.id) }, label),
    messageOf(state, `plans:${plan.id}`),
  )
}

/** Checkboxes of (network, kind) pairs, at most `count` of them ticked. */
function nodeChoice(state: AppState, actions: Actions, plan: Plan): HTMLElement {
  const count = plan.nodes.count ?? 1
  // The nodes of the running plan, until the user changes them (a renewal keeps them).
  const chosen = state.choices.get(plan.id) ?? (state.me?.plan?.id === plan.id ? state.me.nodes : [])
  const options = state.config!.networks.flatMap((n) =>
    n.kinds.filter((k) => k === 'full' || plan.limits.archiveRps !== 0).map((kind) => ({ network: n.slug, kind })),
  )
  const isChosen = (o: { network: string; kind: string }) => chosen.some((c) => c.network === o.network && c.kind === o.kind)
  return h(
    'fieldset',
    { class: 'nodes' },
    h('legend', {}, `Choose ${count === 1 ? 'your node' : `up to ${count} nodes`}`),
    ...options.map((o) => {
      const id = `node-${plan.id}-${o.network}-${o.kind}`
      const box = h('input', {
        type: 'checkbox',
        id,
        checked: isChosen(o),
        disabled: !isChosen(o) && chosen.length >= count,
        'data-node': `${o.network}:${o.kind}`,
      })
      box.addEventListener('change', () => {
        const next = chosen.filter((c) => !(c.network === o.network && c.kind === o.kind))
        if (box.checked) next.push(o)
        state.choices.set(plan.id, next)
        actions.render()
        document.getElementById(id)?.focus()
      })
      return h('label', { for: id, class: 'check' }, box, ` ${o.network} · ${o.kind} node`)
    }),
  )
}
