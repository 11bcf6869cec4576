/**
 * CORS for the RPC endpoints: any origin may call them (keys, not cookies, authenticate, so no
 * credentials are involved); a key's own domain allowlist is what limits browser use.
 */
export const CORS_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Expose-Headers': 'Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset',
})

export const CORS_PREFLIGHT_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'Access-Control-Allow-Methods': 'POST',
  'Access-Control-Allow-Headers': 'Authorization, Content-Type, Accept-Encoding',
  'Access-Control-Max-Age': '600',
})
