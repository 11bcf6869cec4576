import type { DomainsRestricted, KeyIssued, KeyRestricted, KeyRevoked, KeyTokenRequired, TollgateEvent } from '../events/types.js'
import { restrictionsOf, unrestricted } from '../keys/key-restrictions.js'
import type { StateWriter } from '../store/state-writer.js'
import type { Projection } from '../store/projection.js'

/** Keeps `keys` (keyHash → KeyRecord) and `keyIds` (keyId → keyHash): what the request path checks. */
export const keyProjection: Projection = {
  name: 'keys',
  handles: new Set(['DomainsRestricted', 'KeyIssued', 'KeyRestricted', 'KeyRevoked', 'KeyTokenRequired']),
  apply(event: TollgateEvent, writer: StateWriter): void {
    switch (event.type) {
      case 'KeyIssued':
        return issue(event, writer)
      case 'KeyRevoked':
        return revoke(event, writer)
      case 'DomainsRestricted':
        return restrict(event, writer)
      case 'KeyRestricted':
        return restrictKey(event, writer)
      case 'KeyTokenRequired':
        return requireToken(event, writer)
      default:
        return
    }
  },
}

function issue(event: KeyIssued, writer: StateWriter): void {
  // A key is issued once; a second KeyIssued for the same hash (a re-sent event stored twice)
  // must not resurrect a key that was revoked in between.
  if (writer.key(event.keyHash) !== undefined) return
  writer.putKey({
    keyId: event.keyId,
    accountId: event.accountId,
    keyHash: event.keyHash,
    keyCipher: event.keyCipher,
    issuedAt: event.time,
    revokedAt: null,
  })
}

function revoke(event: KeyRevoked, writer: StateWriter): void {
  const hash = writer.keyHashOf(event.keyId)
  const key = hash === undefined ? undefined : writer.key(hash)
  if (key === undefined) return
  // The earliest revocation wins: a "revoke now" after a "regenerate with a day of grace" must
  // stop the key now, and a later grace period must not extend an earlier revocation.
  const revokedAt = key.revokedAt === null ? event.effectiveAt : Math.min(key.revokedAt, event.effectiveAt)
  writer.putKey({ ...key, revokedAt })
}

function restrict(event: DomainsRestricted, writer: StateWriter): void {
  const hash = writer.keyHashOf(event.keyId)
  const key = hash === undefined ? undefined : writer.key(hash)
  if (key === undefined || key.accountId !== event.accountId) return
  const { domains: _old, ...rest } = key
  // No field at all when unrestricted: keys that were never restricted keep their exact shape.
  writer.putKey(event.domains.length === 0 ? rest : { ...rest, domains: [...event.domains] })
}

function restrictKey(event: KeyRestricted, writer: StateWriter): void {
  const hash = writer.keyHashOf(event.keyId)
  const key = hash === undefined ? undefined : writer.key(hash)
  if (key === undefined || key.accountId !== event.accountId) return
  const { restrictions: _old, ...rest } = key
  const restrictions = restrictionsOf(event)
  // No field when unrestricted: the request path's check is then one property read.
  writer.putKey(unrestricted(restrictions) ? rest : { ...rest, restrictions })
}

function requireToken(event: KeyTokenRequired, writer: StateWriter): void {
  const hash = writer.keyHashOf(event.keyId)
  const key = hash === undefined ? undefined : writer.key(hash)
  if (key === undefined || key.accountId !== event.accountId) return
  const { tokenRequired: _old, ...rest } = key
  writer.putKey(event.required ? { ...rest, tokenRequired: true } : rest)
}
