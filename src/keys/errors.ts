/** The environment has no TOLLGATE_SECRET. */
export class MissingSecretError extends Error {
  override name = 'MissingSecretError'
  constructor(options?: { cause?: unknown }) {
    super(
      'TOLLGATE_SECRET is not set. It encrypts API keys so that their owners can see them again; ' +
        'set it to a long random value, e.g. `export TOLLGATE_SECRET=$(openssl rand -hex 32)`, ' +
        'and keep it: keys encrypted under one secret cannot be read with another.',
      options,
    )
  }
}

/** The secret is too short to be one. */
export class WeakSecretError extends Error {
  override name = 'WeakSecretError'
  constructor(length: number, minLength: number) {
    super(`TOLLGATE_SECRET is ${length} characters long; it must be at least ${minLength} ` + '(e.g. `openssl rand -hex 32`)')
  }
}

/** A ciphertext that does not decrypt: wrong secret, or damaged data. */
export class KeyDecryptError extends Error {
  override name = 'KeyDecryptError'
  constructor(options?: { cause?: unknown }) {
    super('cannot decrypt the API key: TOLLGATE_SECRET differs from the one it was encrypted with, or the data is damaged', options)
  }
}

/** A restriction set refused as given (the message says which entry and why). */
export class BadRestrictionError extends Error {
  override name = 'BadRestrictionError'
}

/** A key refused as given (the message says why). */
export class BadJwtKeyError extends Error {
  override name = 'BadJwtKeyError'
}
