import { createRequire } from 'node:module'
import type * as UWS from 'uWebSockets.js'
import { UwsFallbackError } from './errors.js'

/**
 * uWebSockets.js through the npm alias of docs/architecture.md (platform facts). The package silently falls back to a
 * slow `ws`-based implementation when its native binary does not load (another Node version,
 * another libc); a gateway running on it would be several times slower with no sign of why, so
 * the fallback is refused here with a message that says what to do.
 */
const require = createRequire(import.meta.url)

function loadNativeUws(): typeof UWS {
  const originalWarn = console.warn
  const warnings: string[] = []
  // The package prints its fallback notice with console.warn; keep it for our own message.
  console.warn = (...args: unknown[]) => void warnings.push(args.map(String).join(' '))
  let mod: typeof UWS
  try {
    mod = require('uWebSockets.js') as typeof UWS
  } finally {
    console.warn = originalWarn
  }
  // The native module exports SSLApp and getParts; the fallback exports neither.
  const native =
    typeof (mod as unknown as Record<string, unknown>).SSLApp === 'function' && typeof (mod as unknown as Record<string, unknown>).getParts === 'function'
  if (!native || process.env.UWS_USE_FALLBACK) {
    throw new UwsFallbackError(
      `uWebSockets.js could not load its native binary for Node ${process.version} (ABI ${process.versions.modules}, ${process.platform}-${process.arch}) ` +
        `and would fall back to a slow JavaScript implementation; Tollgate refuses to run on it. ` +
        `Use Node 20 (the version the "uWebSockets.js" alias in package.json is built for), or point the alias at an official uWebSockets.js build for your Node and OS. ` +
        (warnings.length ? `Loader said: ${warnings.join(' ').slice(0, 400)}` : ''),
    )
  }
  return mod
}

export const uws = loadNativeUws()
export type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket, WebSocket } from 'uWebSockets.js'
