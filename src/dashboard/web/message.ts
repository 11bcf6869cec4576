import { h } from './dom'
import type { AppState } from './state'

/** The message of a place, as a live region so that screen readers hear it. */
export function messageOf(state: AppState, where: string): HTMLElement {
  const m = state.messages.get(where)
  return h('p', { class: `msg ${m?.kind ?? ''}`, role: m?.kind === 'error' ? 'alert' : 'status', 'data-msg': where }, m?.text ?? '')
}
