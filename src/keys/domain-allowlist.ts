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
