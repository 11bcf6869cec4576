import { createSiweMessage } from 'viem/siwe'
import type { PrivateKeyAccount } from 'viem/accounts'

/** The dashboard's JSON API as the page calls it: same origin, JSON, a session cookie. */
export class DashboardClient {
  readonly base: string
  cookie = ''
  /** The last Set-Cookie header the gateway sent. */
  setCookie = ''

  constructor(base: string) {
    this.base = base
  }

  async call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: any }> {
    const res = await fetch(this.base + path, {
      method,
      headers: {
        ...(body === undefined ? {} : { 'content-type': 'application/json', origin: this.base }),
        ...(this.cookie ? { cookie: this.cookie } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const set = res.headers.get('set-cookie')
    if (set) {
      this.setCookie = set
      const pair = set.split(';')[0]!
      this.cookie = pair.endsWith('=') ? '' : pair
    }
    return { status: res.status, json: await res.json().catch(() => undefined) }
  }

  get(path: string) {
    return this.call('GET', path)
  }
  post(path: string, body: unknown = {}) {
    return this.call('POST', path, body)
  }
  put(path: string, body: unknown) {
    return this.call('PUT', path, body)
  }

  /** Sign in with an account (an EOA) the way the page does; returns the verify answer. */
  async signIn(account: PrivateKeyAccount, chainId: number): Promise<{ status: number; json: any }> {
    const { json } = await this.post('/api/siwe/nonce')
    const url = new URL(this.base)
    const message = createSiweMessage({
      domain: url.host,
      address: account.address,
      uri: url.origin,
      version: '1',
      chainId,
      nonce: json.nonce,
      issuedAt: new Date(),
      expirationTime: new Date(Date.now() + 600_000),
    })
    return this.post('/api/siwe/verify', { message, signature: await account.signMessage({ message }) })
  }
}
