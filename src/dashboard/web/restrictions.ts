import { h } from './dom'
import type { KeyRestrictions } from './api'
import { messageOf } from './message'
import type { Actions, AppState } from './state'

/** One textarea of the form: the rule it sets, its label, an example, and how its entries are split. */
interface Field {
  id: 'methods' | 'contracts' | 'ips' | 'userAgents'
  label: string
  placeholder: string
  /** User agents hold spaces and commas (`Mozilla/5.0 (X11; Linux x86_64)`): one a line. */
  split: RegExp
}

const FIELDS: readonly Field[] = [
  { id: 'methods', label: 'Methods (eth_call, or a namespace: debug_*)', placeholder: 'eth_chainId\neth_call\neth_getLogs', split: /[\s,]+/ },
  { id: 'contracts', label: 'Contracts the calls may name (0x addresses)', placeholder: '0x…', split: /[\s,]+/ },
  { id: 'ips', label: 'Client IPs or ranges (203.0.113.7, 10.0.0.0/8, 2001:db8::/32)', placeholder: '203.0.113.7\n10.0.0.0/8', split: /[\s,]+/ },
  { id: 'userAgents', label: 'User agents: the User-Agent header must contain one of these, one a line', placeholder: 'my-indexer/', split: /\n+/ },
]

/** What the form shows for a rule: the owner's draft while a save failed, else what the key has. */
function shown(state: AppState, r: KeyRestrictions, id: Field['id'], denied: boolean): string {
  const draft = state.drafts.get(`restrictions:${id}`)
  if (draft !== undefined) return draft
  const list = id === 'methods' ? (denied ? r.deniedMethods : r.methods) : r[id]
  return (list ?? []).join('\n')
}

/**
 * The key's restrictions (src/keys/key-restrictions.ts) as a form beside the domain allowlist: the
 * whole set is sent at once (PUT /api/keys/restrictions replaces it), and the API's message is shown
 * when it refuses one (an entry it cannot read, more entries than a rule may have).
 */
export function restrictionsForm(state: AppState, actions: Actions, restrictions: KeyRestrictions): HTMLElement {
  const draftMode = state.drafts.get('restrictions:mode')
  const denied = draftMode === undefined ? restrictions.deniedMethods !== undefined && restrictions.methods === undefined : draftMode === 'denied'
  const mode = h(
    'select',
    { id: 'restrict-mode', 'aria-label': 'Whether the methods listed are the only ones allowed, or the ones denied' },
    h('option', { value: 'allowed', selected: !denied }, 'Only these methods are allowed'),
    h('option', { value: 'denied', selected: denied }, 'These methods are denied'),
  )
  const areas = new Map<Field['id'], HTMLTextAreaElement>()
  const fields = FIELDS.map((f) => {
    const area = h(
      'textarea',
      { id: `restrict-${f.id}`, rows: 3, placeholder: f.placeholder, spellcheck: 'false', 'aria-describedby': 'restrictions-help' },
      shown(state, restrictions, f.id, denied),
    )
    areas.set(f.id, area)
    return h('div', { class: 'rule' }, h('label', { for: `restrict-${f.id}` }, f.label), f.id === 'methods' ? mode : null, area)
  })
  const save = (): void => {
    const out: KeyRestrictions = {}
    for (const f of FIELDS) {
      const area = areas.get(f.id)!
      state.drafts.set(`restrictions:${f.id}`, area.value)
      const list = area.value
        .split(f.split)
        .map((e) => e.trim())
        .filter(Boolean)
      if (f.id === 'methods') out[mode.value === 'denied' ? 'deniedMethods' : 'methods'] = list
      else out[f.id] = list
    }
    state.drafts.set('restrictions:mode', mode.value)
    actions.saveRestrictions(out)
  }
  return h(
    'div',
    { class: 'restrictions' },
    h('h3', {}, 'Restrictions'),
    h(
      'p',
      { class: 'hint', id: 'restrictions-help' },
      'Bound what this key can do, whoever sends it: one entry per line or separated by commas; an empty box is no rule. A call must pass every rule the key has, and one entry of each is enough. Refused calls get HTTP 403 and are counted under Usage, by rule.',
    ),
    ...fields,
    h(
      'button',
      { type: 'button', class: 'secondary', disabled: state.busy.has('restrictions'), 'data-action': 'save-restrictions', onclick: save },
      'Save restrictions',
    ),
    messageOf(state, 'restrictions'),
  )
}
