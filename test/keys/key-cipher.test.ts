import t from 'tap'
import { KeyCipher, secretFromEnv } from '../../src/keys/key-cipher.js'
import { KeyDecryptError, MissingSecretError, WeakSecretError } from '../../src/keys/errors.js'
import { generateApiKey } from '../../src/keys/api-key.js'

const SECRET = 'a'.repeat(64)

t.test('encrypt then decrypt gives the key back; the ciphertext hides it and varies', async (t) => {
  const cipher = KeyCipher.fromSecret(SECRET)
  const { key } = generateApiKey()
  const one = cipher.encrypt(key)
  const two = cipher.encrypt(key)
  t.match(one, /^[A-Za-z0-9_-]+$/, 'base64url')
  t.notOk(one.includes(key.slice(3, 20)))
  t.not(one, two, 'a random IV each time')
  t.equal(cipher.decrypt(one), key)
  t.equal(KeyCipher.fromSecret(SECRET).decrypt(two), key, 'another instance with the same secret reads it')
  t.equal(Buffer.from(one, 'base64url').length, 12 + 16 + key.length, 'iv | tag | ciphertext')
})

t.test('a wrong secret or a changed byte fails to decrypt', async (t) => {
  const text = KeyCipher.fromSecret(SECRET).encrypt('tg_secret')
  t.throws(() => KeyCipher.fromSecret('b'.repeat(64)).decrypt(text), KeyDecryptError)
  const bytes = Buffer.from(text, 'base64url')
  bytes[bytes.length - 1] ^= 1
  t.throws(() => KeyCipher.fromSecret(SECRET).decrypt(bytes.toString('base64url')), { name: 'KeyDecryptError' })
  t.throws(() => KeyCipher.fromSecret(SECRET).decrypt('short'), KeyDecryptError)
})

t.test('a secret shorter than 16 characters is refused', async (t) => {
  t.throws(() => KeyCipher.fromSecret('too-short'), WeakSecretError)
  t.throws(() => KeyCipher.fromSecret('x'.repeat(15)), /at least 16/)
  t.doesNotThrow(() => KeyCipher.fromSecret('x'.repeat(16)))
})

t.test('secretFromEnv: a missing secret says to set TOLLGATE_SECRET and how', async (t) => {
  t.equal(secretFromEnv({ TOLLGATE_SECRET: SECRET }), SECRET)
  t.throws(() => secretFromEnv({}), MissingSecretError)
  t.throws(() => secretFromEnv({ TOLLGATE_SECRET: '  ' }), { name: 'MissingSecretError' })
  try {
    secretFromEnv({})
    t.fail('should throw')
  } catch (error) {
    t.match((error as Error).message, /TOLLGATE_SECRET/)
    t.match((error as Error).message, /openssl rand -hex 32/)
  }
})
