import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto'
import { MissingSecretError, WeakSecretError, KeyDecryptError } from './errors.js'

const MIN_SECRET_LENGTH = 16
const IV_LENGTH = 12 // the length GCM is specified for; other lengths get hashed into one
const TAG_LENGTH = 16
// Fixed, versioned context for HKDF: the same secret used elsewhere (an admin token derived
// from it, a future cipher v2) yields an unrelated key.
const HKDF_SALT = 'tollgate'
const HKDF_INFO = 'tollgate api-key cipher v1'

/**
 * Encrypts API keys so that the dashboard can show a key to its owner again, while events
 * and LMDB hold only ciphertext. AES-256-GCM with a random 12-byte IV; the output is base64url
 * of iv | tag | ciphertext. GCM authenticates: a wrong secret or a changed byte fails to
 * decrypt instead of returning garbage.
 *
 * @example
 * const cipher = KeyCipher.fromSecret(secretFromEnv())
 * cipher.decrypt(cipher.encrypt(key)) === key
 */
export class KeyCipher {
  readonly #key: Buffer

  private constructor(key: Buffer) {
    this.#key = key
  }

  /** A cipher whose 32-byte key is derived from `secret` with HKDF-SHA256. */
  static fromSecret(secret: string): KeyCipher {
    if (typeof secret !== 'string' || secret.length < MIN_SECRET_LENGTH) throw new WeakSecretError(secret?.length ?? 0, MIN_SECRET_LENGTH)
    return new KeyCipher(Buffer.from(hkdfSync('sha256', secret, HKDF_SALT, HKDF_INFO, 32)))
  }

  encrypt(key: string): string {
    const iv = randomBytes(IV_LENGTH)
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv)
    const body = Buffer.concat([cipher.update(key, 'utf8'), cipher.final()])
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')
  }

  /** The key back; throws KeyDecryptError on a wrong secret or damaged data. */
  decrypt(text: string): string {
    const data = Buffer.from(text, 'base64url')
    if (data.length < IV_LENGTH + TAG_LENGTH) throw new KeyDecryptError()
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.#key, data.subarray(0, IV_LENGTH), {
        authTagLength: TAG_LENGTH,
      })
      decipher.setAuthTag(data.subarray(IV_LENGTH, IV_LENGTH + TAG_LENGTH))
      return Buffer.concat([decipher.update(data.subarray(IV_LENGTH + TAG_LENGTH)), decipher.final()]).toString('utf8')
    } catch (cause) {
      throw new KeyDecryptError({ cause })
    }
  }
}

/** TOLLGATE_SECRET from `env`; throws MissingSecretError (saying how to make one) when unset or empty. */
export function secretFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  const secret = env.TOLLGATE_SECRET
  if (secret === undefined || secret.trim() === '') throw new MissingSecretError()
  return secret
}
