import { copyButton, fill, h, masked } from './dom'
import type { AppState } from './state'

export function renderEndpoints(state: AppState): void {
  const me = state.me
  if (!me) return fill('endpoints', h('p', { class: 'hint' }, 'Connect your wallet to see your endpoints.'))
  if (!me.plan || !me.key || me.endpoints.length === 0)
    return fill('endpoints', h('p', { class: 'hint' }, 'Choose a plan: your endpoints appear here with your key.'))
  const key = me.key.apiKey
  const shown = state.showKey ? key : masked(key)
  return fill(
    'endpoints',
    h(
      'p',
      { class: 'hint' },
      'Send your key as ?apikey= or as the header Authorization: Bearer <key>. Keep it out of code that users can see; use environment variables.',
    ),
    ...me.endpoints.map((e) => {
      const curl = (k: string) =>
        `curl -s ${e.http} -H 'Content-Type: application/json' -H 'Authorization: Bearer ${k}' -d '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}'`
      return h(
        'article',
        { class: 'endpoint', 'data-network': e.network },
        h('h3', {}, `${e.network}`, h('span', { class: 'sub' }, ` chain ${e.chainId} · ${e.kinds.join(' and ')} node${e.kinds.length > 1 ? 's' : ''}`)),
        row('HTTPS', `${e.http}?apikey=${shown}`, `${e.http}?apikey=${key}`, `Copy the HTTP URL of ${e.network} with your key`),
        row('WebSocket', `${e.ws}?apikey=${shown}`, `${e.ws}?apikey=${key}`, `Copy the WebSocket URL of ${e.network} with your key`),
        h('p', { class: 'label' }, 'Try it'),
        h('div', { class: 'line' }, h('pre', { class: 'code' }, curl(shown)), copyButton(curl(key), `Copy the curl command for ${e.network}`)),
      )
    }),
  )
}

function row(label: string, shown: string, copy: string, copyLabel: string): HTMLElement {
  return h('div', { class: 'line' }, h('span', { class: 'label' }, label), h('code', { class: 'url' }, shown), copyButton(copy, copyLabel))
}
