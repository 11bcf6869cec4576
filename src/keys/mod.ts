/** API keys: generation, shape check, hashing, and encryption for their owners. */
export {
  API_KEY_LENGTH,
  API_KEY_PREFIX,
  type GeneratedApiKey,
  generateApiKey,
  hashApiKey,
  isWellFormedApiKey,
  sameHash,
} from './api-key.js'
export { KeyCipher, KeyDecryptError, MissingSecretError, WeakSecretError, secretFromEnv } from './key-cipher.js'
