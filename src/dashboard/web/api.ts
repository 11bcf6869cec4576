/** The dashboard's JSON API (same origin, session cookie). */

import { ApiFailure } from './errors'

export interface ApiResult<T> {
  status: number
  data: T
}

async function call<T>(method: string, path: string, body?: unknown): Promise<ApiResult<T>> {
  let res: Response
  try {
    res = await fetch(path, {
      method,
      credentials: 'same-origin',
      headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
  } catch {
    throw new ApiFailure(0, 'OFFLINE', 'The gateway cannot be reached: check your connection and try again.')
  }
  const data = (await res.json().catch(() => ({}))) as { error?: { code: string; message: string; details?: Record<string, string | number> } }
  if (!res.ok || data.error) {
    const e = data.error ?? { code: 'HTTP_' + res.status, message: `The gateway answered ${res.status}.` }
    throw new ApiFailure(res.status, e.code, e.message, e.details)
  }
  return { status: res.status, data: data as T }
}

export const api = {
  get: <T>(path: string) => call<T>('GET', path),
  post: <T>(path: string, body: unknown = {}) => call<T>('POST', path, body),
  put: <T>(path: string, body: unknown) => call<T>('PUT', path, body),
}

export type NodeKind = 'full' | 'archive'
export interface Entitlement {
  network: string
  kind: NodeKind
}

export interface PublicConfig {
  /** sessionTtlMs: how long a sign-in lasts (the message's Expiration Time; absent from older gateways). */
  siwe: { domain: string; origin: string; sessionTtlMs?: number }
  networks: Array<{ slug: string; chainId: number; kinds: NodeKind[]; http: string; ws: string }>
  catalog: string
  plans: Array<{
    id: string
    name: string
    description: string
    priceUsdPerMonth: number | null
    priceFrom: boolean
    periodMs: number | null
    limits: { fullRps: number | null; archiveRps: number | null }
    nodes: { rule: 'all-full' | 'choose' | 'all' | 'dedicated'; count?: number }
    how: 'free' | 'pay' | 'request'
  }>
  payments: { network: string; chainId: number; token: string; treasury: string; confirmations: number } | null
}

export interface Invoice {
  invoiceId: string
  planId: string
  planName: string
  nodes: Entitlement[]
  network: string
  chainId: number
  token: string
  treasury: string
  amount: string
  amountUsd: string
  createdAt: number
  /** Until when it can be paid (by the block time of the transfer); null: no expiry. */
  expiresAt: number | null
  status: 'unpaid' | 'expired' | 'paid' | 'active'
  txHash: string | null
  /** Transfers mined after it expired: recorded, they did not pay it (a new invoice takes them). */
  latePayments: Array<{ txHash: string; amountUsd: string; minedAt: number }>
}

export interface Me {
  accountId: string
  wallet: string
  plan: { id: string; name: string; startsAt: number; endsAt: number | null; active: boolean } | null
  nodes: Entitlement[]
  freePlansUsed: string[]
  key: { keyId: string; apiKey: string; issuedAt: number; domains: string[]; restrictions: KeyRestrictions } | null
  previousKey: { keyId: string; ending: string; worksUntil: number } | null
  endpoints: Array<{ network: string; chainId: number; kinds: NodeKind[]; http: string; ws: string }>
  invoices: Invoice[]
  privateNode: { requestedAt: number | null; attached: Array<{ network: string; kind: NodeKind }> } | null
}

/** A key's own rules (src/keys/key-restrictions.ts): a list absent or empty is no rule. */
export interface KeyRestrictions {
  methods?: string[]
  deniedMethods?: string[]
  contracts?: string[]
  ips?: string[]
  userAgents?: string[]
}

/** The rules that refuse calls, in the order they are shown. */
export const REFUSAL_RULES = ['method', 'contract', 'ip', 'user-agent'] as const

export interface Usage {
  from: number
  hours: number
  hourMs: number
  /** units: compute units per hour (docs/costs.md). */
  series: Array<{ network: string; kind: NodeKind; requests: number[]; errors: number[]; units: number[] }>
  /** Calls the account's keys' own rules refused in those hours, by rule (a rule that refused none is absent; absent from older gateways). */
  refused?: Partial<Record<(typeof REFUSAL_RULES)[number], number>>
}
