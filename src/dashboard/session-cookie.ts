import { isIP } from 'node:net'

/** The cookie's name where it can carry the `__Host-` prefix, and where it cannot. */
const SESSION_COOKIE = '__Host-tg_session'
const PLAIN_SESSION_COOKIE = 'tg_session'

/**
 * How the session cookie is written for the dashboard at `origin` (publicUrl, else the listen
 * address). `Secure` everywhere but plain http on a loopback address (a first try on one machine,
 * `tollgate dev`): over plain http anywhere else the cookie (and the key the page shows) would
 * cross the network readable, so the browser is told not to send it there, and the dashboard
 * signs in only behind TLS (set publicUrl to its https address). With `Secure`, the name takes
 * the `__Host-` prefix: the browser then refuses the cookie from a sibling subdomain or another
 * path (a `Domain` attribute cannot be set on it), so a site on `evil.example.com` cannot plant
 * a session of its own choosing on `rpc.example.com`.
 */
export interface CookiePolicy {
  name: string
  secure: boolean
}

export function cookiePolicy(origin: string): CookiePolicy {
  const url = new URL(origin)
  const secure = !(url.protocol === 'http:' && isLoopback(url.hostname))
  return secure ? { name: SESSION_COOKIE, secure } : { name: PLAIN_SESSION_COOKIE, secure }
}

/** The Set-Cookie value of a session (an empty token with max age 0 ends it). */
export function sessionCookie(policy: CookiePolicy, token: string, maxAgeS: number): string {
  return `${policy.name}=${token}; Path=/; Max-Age=${Math.max(0, maxAgeS)}; HttpOnly; SameSite=Strict${policy.secure ? '; Secure' : ''}`
}

/** The value of cookie `name` in a Cookie header. */
export function cookieValue(header: string, name: string): string | undefined {
  for (const part of header.split(';')) {
    const eq = part.indexOf('=')
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim()
  }
  return undefined
}

function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '')
  if (host === 'localhost' || host.endsWith('.localhost')) return true
  if (isIP(host) === 4) return host.startsWith('127.')
  return host === '::1'
}
