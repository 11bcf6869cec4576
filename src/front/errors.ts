/** uWebSockets.js could not load its native binary and would fall back to its slow JavaScript implementation (uws.ts). */
export class UwsFallbackError extends Error {
  override name = 'UwsFallbackError'
}

/** A port another process serves (or an address this machine does not have), named by its config field. */
export class PortUnavailableError extends Error {
  override name = 'PortUnavailableError'
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
  }
}

/** `admin.listen.host` is not a loopback address and TOLLGATE_ADMIN_TOKEN is not set. */
export class AdminTokenRequiredError extends Error {
  override name = 'AdminTokenRequiredError'
  constructor(host: string) {
    super(
      `admin.listen.host is ${JSON.stringify(host)}, which is not a loopback address: /metrics would be open to the network. ` +
        'Set TOLLGATE_ADMIN_TOKEN to a secret (e.g. `openssl rand -hex 32`) that Prometheus sends as a bearer token, or bind the admin listener to 127.0.0.1',
    )
  }
}
