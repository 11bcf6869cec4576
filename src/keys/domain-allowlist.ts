import { BadDomainsError } from '../accounts/errors.js'

/** Most domains on one key: the check runs on every call of a browser key. */
export const MAX_DOMAINS = 20

const ENTRY = /^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*(:\d{1,5})?$/

/**
 * Check and normalise an allowlist as the owner typed it: lower case, no scheme or path,
 * duplicates dropped. `https://app.example.com/x` becomes `app.example.com`.
 * @throws BadDomainsError
 */
export function normalizeDomains(input: unknown): string[] {
  if (!Array.isArray(input)) throw new BadDomainsError('not a list')
  const out = new Set<string>()
  for (const raw of input) {
    if (typeof raw !== 'string') throw new BadDomainsError(`${JSON.stringify(raw)} is not text`)
    let entry = raw.trim().toLowerCase()
    if (entry === '') continue
    entry = entry.replace(/^[a-z][a-z0-9+.-]*:\/\//, '').replace(/\/.*$/, '')
    if (entry.length > 260 || !ENTRY.test(entry)) throw new BadDomainsError(`${JSON.stringify(raw)} is not a host name`)
    out.add(entry)
  }
  if (out.size > MAX_DOMAINS) throw new BadDomainsError(`${out.size} domains, at most ${MAX_DOMAINS}`)
  return [...out]
}

/**
 * Whether a browser request may use a key restricted to `domains`, judged by its Origin header,
 * else its Referer. No allowlist: any. An allowlist and neither header: refused (a browser
 * always sends Origin on a cross-origin POST, so a restricted key is a browser key). Entries
 * match the host exactly, `*.example.com` matches its subdomains, and an entry with a port
 * matches that port only.
 *
 * This stops other web sites from using a key found in a page's code; it does not stop a
 * program, which can send any Origin it likes.
 */
export function originAllowed(domains: readonly string[] | undefined, origin: string, referer: string): boolean {
  if (domains === undefined || domains.length === 0) return true
  const from = origin !== '' && origin !== 'null' ? origin : referer
  if (from === '') return false
  let url: URL
  try {
    url = new URL(from)
  } catch {
    return false
  }
  const hostname = url.hostname.toLowerCase()
  const port = url.port
  for (const entry of domains) {
    const colon = entry.lastIndexOf(':')
    const [host, entryPort] = colon > 0 && /^\d+$/.test(entry.slice(colon + 1)) ? [entry.slice(0, colon), entry.slice(colon + 1)] : [entry, undefined]
    if (entryPort !== undefined && entryPort !== (port || (url.protocol === 'https:' ? '443' : '80'))) continue
    if (host.startsWith('*.') ? hostname.endsWith(host.slice(1)) : hostname === host) return true
  }
  return false
}
