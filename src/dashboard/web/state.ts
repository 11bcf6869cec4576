import type { Entitlement, KeyRestrictions, Me, PublicConfig, Usage } from './api'

/** Everything the page shows; sections render from it and call the actions. */
export interface AppState {
  config: PublicConfig | null
  me: Me | null
  usage: Usage | null
  address: `0x${string}` | null
  /** What is happening now, per place ("plans:tier-1", "key", "signin"), for busy buttons and messages. */
  busy: Set<string>
  /** Messages shown next to what they concern. */
  messages: Map<string, { text: string; kind: 'info' | 'error' | 'ok' }>
  /** Node choices per plan, kept across renders. */
  choices: Map<string, Entitlement[]>
  /** Show the key in clear. */
  showKey: boolean
  /** What the owner typed in a form whose save failed ("restrictions:methods"…), kept across renders until it is saved. */
  drafts: Map<string, string>
}

export interface Actions {
  connect(): void
  signOut(): void
  choosePlan(planId: string): void
  regenerate(graceSeconds: number): void
  saveDomains(text: string): void
  saveRestrictions(restrictions: KeyRestrictions): void
  render(): void
}

export function newState(): AppState {
  return { config: null, me: null, usage: null, address: null, busy: new Set(), messages: new Map(), choices: new Map(), showKey: false, drafts: new Map() }
}

export function say(state: AppState, where: string, text: string, kind: 'info' | 'error' | 'ok' = 'info'): void {
  state.messages.set(where, { text, kind })
}
