import { randomBytes } from 'node:crypto'
import { createSiweMessage } from 'viem/siwe'
import type { Address } from 'viem'
import type { PrivateKeyAccount } from 'viem/accounts'
import { startAnvil, type Anvil, type StartAnvilOptions } from '../../harness/anvil.js'
import { startCountingProxy, type CountingProxy } from './counting-proxy.js'
import { startGatewayProcess, type GatewayProcess } from './gateway-process.js'
import { freePort } from '../../harness/free-port.js'
import { startNats, type NatsServer } from '../../harness/nats-server.js'

/**
 * A real gateway process on a real nats-server (its monitoring on, to count what the gateway asks
 * of JetStream) and a real anvil (chain 31337) behind a proxy that counts the calls reaching it,
 * with the dashboard's API spoken to as strangers do: each caller an IP of its own, through
 * X-Forwarded-For (trustProxy), as a reverse proxy would send it.
 */
export interface ApiGateway {
  gw: GatewayProcess
  /** Where to reach it (its listen address; `gw.http` is its publicUrl when it has one). */
  base: string
  nats: NatsServer
  /** Its JetStream stream: another gateway given it is an instance of the same fleet. */
  stream: string
  anvil: Anvil
  proxy: CountingProxy
  /** A client IP address not used before. */
  freshIp(): string
  /** A call as the page makes it (JSON, same origin), from `ip`. */
  call(ip: string, method: string, path: string, body?: unknown, cookie?: string): Promise<{ status: number; json: any; headers: Headers }>
  /** A sign-in message for `address` on this gateway, with a fresh nonce. */
  siweMessage(address: Address, opts?: { chainId?: number; expiresInMs?: number }): Promise<string>
  /** Sign in with an EOA from a fresh IP; `cookie` is the session's `name=value`. */
  signIn(
    account: PrivateKeyAccount,
    opts?: { chainId?: number; expiresInMs?: number },
  ): Promise<{ status: number; json: any; cookie: string; setCookie: string }>
}

/** Start one; `config` (or what `configOf(anvil)` gives) is merged over the gateway's config (dashboard limits, publicUrl); its `networks` are added to `eth-1`. */
export async function startApiGateway(
  t: { teardown(fn: () => unknown): void },
  configOf: Record<string, unknown> | ((anvil: Anvil) => Promise<Record<string, unknown>>) = {},
  anvilOptions: StartAnvilOptions = {},
): Promise<ApiGateway> {
  const anvil = await startAnvil({ chainId: 31337, ...anvilOptions })
  t.teardown(() => anvil.stop())
  // A function of the node: config that needs contracts deployed on it first (payment terms).
  const config = typeof configOf === 'function' ? await configOf(anvil) : configOf
  const proxy = await startCountingProxy(anvil)
  t.teardown(() => proxy.close())
  const nats = await startNats({ monitor: true })
  t.teardown(() => nats.stop())
  const stream = `T${randomBytes(4).toString('hex')}`
  // With a publicUrl (TLS in front, in production) the gateway's own address is only known from its config.
  const port = config.publicUrl === undefined ? 0 : await freePort()
  const gw = await startGatewayProcess(t, {
    config: {
      listen: { host: '127.0.0.1', port },
      trustProxy: true,
      events: { nats: nats.url, stream },
      ...config,
      networks: { 'eth-1': { chainId: 31337, upstreams: [{ url: proxy.url, kind: 'full' }] }, ...(config.networks as object | undefined) },
    },
  })
  const publicUrl = new URL((config.publicUrl as string | undefined) ?? gw.http)
  const base = port === 0 ? gw.http : `http://127.0.0.1:${port}`
  let ips = 0
  const freshIp = (): string => `10.${(++ips >> 16) & 255}.${(ips >> 8) & 255}.${ips & 255}`
  const call: ApiGateway['call'] = async (ip, method, path, body, cookie) => {
    const res = await fetch(base + path, {
      method,
      headers: {
        'x-forwarded-for': ip,
        ...(body === undefined ? {} : { 'content-type': 'application/json', origin: publicUrl.origin }),
        ...(cookie ? { cookie } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    return { status: res.status, json: await res.json(), headers: res.headers }
  }
  const siweMessage: ApiGateway['siweMessage'] = async (address, opts = {}) => {
    const { json } = await call(freshIp(), 'POST', '/api/siwe/nonce', {})
    return createSiweMessage({
      domain: publicUrl.host,
      address,
      uri: publicUrl.origin,
      version: '1',
      chainId: opts.chainId ?? 31337,
      nonce: json.nonce,
      issuedAt: new Date(),
      expirationTime: new Date(Date.now() + (opts.expiresInMs ?? 300_000)),
    })
  }
  const signIn: ApiGateway['signIn'] = async (account, opts) => {
    const message = await siweMessage(account.address, opts)
    const out = await call(freshIp(), 'POST', '/api/siwe/verify', { message, signature: await account.signMessage({ message }) })
    const setCookie = out.headers.get('set-cookie') ?? ''
    return { ...out, setCookie, cookie: setCookie.split(';')[0]! }
  }
  return { gw, base, nats, stream, anvil, proxy, freshIp, call, siweMessage, signIn }
}
