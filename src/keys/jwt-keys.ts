import { createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto'
import { BadJwtKeyError } from './errors.js'

/**
 * The public keys an account registers to sign its own tokens (docs/keys.md "Signed tokens"):
 * a developer's backend signs a short-lived JWT with its private key, a browser sends it instead
 * of the API key, and the gateway checks it against the public key registered here. Only
 * asymmetric algorithms: the gateway never holds anything that can sign.
 */
export type JwtAlg = 'ES256' | 'RS256' | 'EdDSA'

export const JWT_ALGS: readonly JwtAlg[] = Object.freeze(['ES256', 'RS256', 'EdDSA'])

/** A registered key as the events and the records carry it: one form (SPKI PEM) whatever was given. */
export interface JwtPublicKey {
  /** The id a token's header names (`kid`). */
  kid: string
  alg: JwtAlg
  /** SPKI PEM. */
  publicKey: string
}

/**
 * Most keys per account: one in use and one or two being rotated in or out. Each token names
 * one by its kid, so the bound is not for speed but for a record read on every uncached token.
 */
export const MAX_JWT_KEYS = 3

/** Smallest RSA modulus accepted: under 2048 bits a key is within reach of factoring. */
export const MIN_RSA_BITS = 2048

const KID = /^[A-Za-z0-9._-]{1,64}$/

/**
 * Check a key as an owner gave it (a PEM text, or a JWK as an object or JSON text) against the
 * algorithm named, and return it in the stored form.
 * @throws BadJwtKeyError: a bad kid, an unknown algorithm, a private or secret key, a key of
 * another type or curve than the algorithm's, an RSA key under 2048 bits
 * @example
 * normalizeJwtKey({ kid: 'backend-1', alg: 'ES256', publicKey: '-----BEGIN PUBLIC KEY-----\n…' })
 */
export function normalizeJwtKey(input: { kid: unknown; alg: unknown; publicKey: unknown }): JwtPublicKey {
  const { kid, alg, publicKey } = input
  if (typeof kid !== 'string' || !KID.test(kid)) throw new BadJwtKeyError(`kid ${JSON.stringify(kid)}: 1 to 64 letters, digits, '.', '_' or '-'`)
  if (typeof alg !== 'string' || !(JWT_ALGS as readonly string[]).includes(alg)) {
    throw new BadJwtKeyError(`algorithm ${JSON.stringify(alg)}: one of ${JWT_ALGS.join(', ')} (HMAC and none are never accepted)`)
  }
  const key = publicKeyOf(publicKey)
  checkKeyFits(key, alg as JwtAlg)
  return { kid, alg: alg as JwtAlg, publicKey: key.export({ type: 'spki', format: 'pem' }).toString() }
}

function publicKeyOf(given: unknown): KeyObject {
  let jwk: JsonWebKey | undefined
  if (typeof given === 'string' && given.trimStart().startsWith('{')) {
    try {
      jwk = JSON.parse(given) as JsonWebKey
    } catch {
      throw new BadJwtKeyError('the key is neither a PEM public key nor a JWK (its JSON does not parse)')
    }
  } else if (given !== null && typeof given === 'object') {
    jwk = given as JsonWebKey
  }
  if (jwk !== undefined) {
    // `d` (and RSA's primes) are the private part: a key that signs must never be sent here.
    if ('d' in jwk || 'p' in jwk) throw new BadJwtKeyError('this JWK is a private key; register the public key only (without "d")')
    if (jwk.kty === 'oct') throw new BadJwtKeyError('this JWK is a secret (kty "oct"); register an ES256, RS256 or EdDSA public key')
    try {
      return createPublicKey({ key: jwk, format: 'jwk' })
    } catch (err) {
      throw new BadJwtKeyError(`this JWK is not a public key: ${(err as Error).message}`)
    }
  }
  if (typeof given !== 'string') throw new BadJwtKeyError('the key must be a PEM text or a JWK')
  if (/PRIVATE KEY-----/.test(given)) throw new BadJwtKeyError('this PEM is a private key; register the public key only (BEGIN PUBLIC KEY)')
  let key: KeyObject
  try {
    key = createPublicKey(given)
  } catch {
    throw new BadJwtKeyError('the key is neither a PEM public key (BEGIN PUBLIC KEY) nor a JWK')
  }
  return key
}

function checkKeyFits(key: KeyObject, alg: JwtAlg): void {
  const type = key.asymmetricKeyType
  const details = key.asymmetricKeyDetails ?? {}
  switch (alg) {
    case 'ES256':
      if (type !== 'ec' || details.namedCurve !== 'prime256v1') throw new BadJwtKeyError(`ES256 needs a P-256 EC key; this one is ${describe(type, details)}`)
      return
    case 'RS256':
      if (type !== 'rsa') throw new BadJwtKeyError(`RS256 needs an RSA key; this one is ${describe(type, details)}`)
      if ((details.modulusLength ?? 0) < MIN_RSA_BITS) {
        throw new BadJwtKeyError(`RSA key of ${details.modulusLength} bits: at least ${MIN_RSA_BITS} are accepted; make a 2048-bit (or larger) key`)
      }
      return
    case 'EdDSA':
      if (type !== 'ed25519') throw new BadJwtKeyError(`EdDSA needs an Ed25519 key; this one is ${describe(type, details)}`)
      return
  }
}

function describe(type: string | undefined, details: { namedCurve?: string; modulusLength?: number }): string {
  if (type === 'ec') return `an EC key on ${details.namedCurve}`
  if (type === 'rsa') return `an RSA key of ${details.modulusLength} bits`
  return `an ${type ?? 'unknown'} key`
}

const imported = new WeakMap<JwtPublicKey, KeyObject>()

/**
 * The key ready for verification, imported once per record entry: a changed key set comes as new
 * entries from the projection, so a removed or replaced key is never verified against.
 */
export function keyObjectOf(key: JwtPublicKey): KeyObject {
  let k = imported.get(key)
  if (k === undefined) {
    k = createPublicKey(key.publicKey)
    imported.set(key, k)
  }
  return k
}
