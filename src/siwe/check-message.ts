import { createSiweMessage, parseSiweMessage, type SiweMessage } from 'viem/siwe'
import { getAddress, isAddress } from 'viem'
import { SiweError } from '../accounts/errors.js'

/** What a sign-in message must say, from our configuration (never from the request). */
export interface SiweExpectations {
  /** host[:port] of the dashboard, e.g. `rpc.example.com` or `127.0.0.1:8080`. */
  domain: string
  /** Origin of the dashboard, e.g. `https://rpc.example.com`; the message's URI must be on it. */
  origin: string
  /** Chain ids the gateway serves (a contract wallet is checked on that chain). */
  chainIds: readonly number[]
  now: number
  /** Tolerated clock difference between the wallet's machine and ours. */
  skewMs?: number
  /** Oldest accepted Issued At (the nonce's lifetime). */
  maxAgeMs: number
}

export interface CheckedSiweMessage {
  /** Checksummed address. */
  address: `0x${string}`
  chainId: number
  nonce: string
  issuedAt: number
  expiresAt: number | null
}

const DEFAULT_SKEW_MS = 60_000

/**
 * Parse an EIP-4361 message and check everything but the nonce's freshness and the signature:
 * the domain and URI against our configuration, the version, a chain we serve, and the times.
 * The text must be exactly what viem's createSiweMessage writes for the fields it holds (what our
 * dashboard sends): a lenient parser would otherwise let a message carry lines it does not read.
 * @throws SiweError BAD_MESSAGE, WRONG_DOMAIN, WRONG_URI, WRONG_CHAIN, MESSAGE_EXPIRED, NOT_YET_VALID
 */
export function checkSiweMessage(text: string, expect: SiweExpectations): CheckedSiweMessage {
  if (typeof text !== 'string' || text.length === 0 || text.length > 4096) throw new SiweError('BAD_MESSAGE', 'the sign-in message is missing or too long')
  const fields = parseSiweMessage(text) as Partial<SiweMessage>
  const { address, domain, uri, version, chainId, nonce, issuedAt } = fields
  if (!address || !isAddress(address, { strict: false }) || !domain || !uri || !version || chainId === undefined || !nonce || !issuedAt) {
    throw new SiweError('BAD_MESSAGE', 'the sign-in message is not an EIP-4361 (Sign-In with Ethereum) message')
  }
  let canonical: string
  try {
    canonical = createSiweMessage({ ...(fields as SiweMessage), address: getAddress(address) })
  } catch (cause) {
    throw new SiweError('BAD_MESSAGE', `the sign-in message is malformed: ${(cause as Error).message.split('\n')[0]}`, { cause })
  }
  if (canonical !== text) throw new SiweError('BAD_MESSAGE', 'the sign-in message has lines or a layout EIP-4361 does not allow')
  if (version !== '1') throw new SiweError('BAD_MESSAGE', `the sign-in message has version ${version}; only 1 exists`)

  if (domain !== expect.domain) throw new SiweError('WRONG_DOMAIN', `the message is for ${domain}, but this dashboard is ${expect.domain}`)
  if (fields.scheme !== undefined && `${fields.scheme}:` !== new URL(expect.origin).protocol) {
    throw new SiweError('WRONG_DOMAIN', `the message is for ${fields.scheme}://${domain}, but this dashboard is ${expect.origin}`)
  }
  let origin: string
  try {
    origin = new URL(uri).origin
  } catch {
    throw new SiweError('WRONG_URI', `the message's URI ${JSON.stringify(uri)} is not a URL`)
  }
  if (origin !== expect.origin) throw new SiweError('WRONG_URI', `the message's URI is on ${origin}, but this dashboard is ${expect.origin}`)
  if (!expect.chainIds.includes(chainId)) {
    throw new SiweError('WRONG_CHAIN', `the message is for chain ${chainId}; this gateway serves chains ${expect.chainIds.join(', ')}`)
  }

  const skew = expect.skewMs ?? DEFAULT_SKEW_MS
  const issued = issuedAt.getTime()
  if (Number.isNaN(issued)) throw new SiweError('BAD_MESSAGE', 'the message has no valid Issued At time')
  if (issued > expect.now + skew) throw new SiweError('NOT_YET_VALID', 'the message was issued in the future: check the clock of your computer')
  if (issued < expect.now - expect.maxAgeMs - skew) throw new SiweError('MESSAGE_EXPIRED', 'the message is too old; sign in again')
  const expiration = fields.expirationTime?.getTime()
  if (expiration !== undefined && (Number.isNaN(expiration) || expiration <= expect.now)) {
    throw new SiweError('MESSAGE_EXPIRED', 'the sign-in message has expired; sign in again')
  }
  const notBefore = fields.notBefore?.getTime()
  if (notBefore !== undefined && (Number.isNaN(notBefore) || notBefore > expect.now + skew)) {
    throw new SiweError('NOT_YET_VALID', 'the sign-in message is not valid yet (Not Before is in the future)')
  }
  return { address: getAddress(address), chainId, nonce, issuedAt: issued, expiresAt: expiration ?? null }
}
