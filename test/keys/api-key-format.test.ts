import t from 'tap'
import { createHash } from 'node:crypto'
import { API_KEY_LENGTH, generateApiKey, hashApiKey, isWellFormedApiKey, sameHash } from '../../src/keys/api-key.js'
import { BASE62_ALPHABET } from '../../src/keys/base62.js'

t.test('a generated key: tg_ prefix, 41 base62 characters after it, checksum valid', async (t) => {
  const { key, keyId, keyHash } = generateApiKey()
  t.equal(API_KEY_LENGTH, 41)
  t.match(key, /^tg_[0-9A-Za-z]{38}$/)
  t.ok(isWellFormedApiKey(key))
  t.match(keyId, /^key_[0-9A-Za-z]{16}$/)
  t.notOk(key.includes(keyId.slice(4)), 'the id is not taken from the key')
  t.equal(keyHash, hashApiKey(key))
})

t.test('keys and ids do not repeat, and every character of the alphabet occurs', async (t) => {
  const keys = new Set<string>()
  const ids = new Set<string>()
  const chars = new Set<string>()
  for (let i = 0; i < 500; i++) {
    const { key, keyId } = generateApiKey()
    keys.add(key)
    ids.add(keyId)
    for (const ch of key.slice(3, 35)) chars.add(ch)
  }
  t.equal(keys.size, 500)
  t.equal(ids.size, 500)
  t.equal(chars.size, 62, 'all 62 digits appear in 16,000 random characters')
})

t.test('the checksum catches every single-character change', async (t) => {
  const { key } = generateApiKey()
  let caught = 0
  let changes = 0
  for (let i = 0; i < key.length; i++) {
    for (const ch of BASE62_ALPHABET + '_-') {
      if (ch === key[i]) continue
      changes++
      if (!isWellFormedApiKey(key.slice(0, i) + ch + key.slice(i + 1))) caught++
    }
  }
  t.equal(caught, changes, `${changes} one-character changes, all refused`)
})

t.test('malformed keys are refused: prefix, length, alphabet', async (t) => {
  const { key } = generateApiKey()
  t.notOk(isWellFormedApiKey('xx_' + key.slice(3)), 'prefix')
  t.notOk(isWellFormedApiKey(key.slice(0, -1)), 'too short')
  t.notOk(isWellFormedApiKey(key + 'a'), 'too long')
  t.notOk(isWellFormedApiKey(key.slice(0, 10) + '+' + key.slice(11)), 'outside the alphabet')
  t.notOk(isWellFormedApiKey(''), 'empty')
  const i = [...key].findIndex((ch, j) => j > 3 && ch !== key[j + 1])
  t.notOk(isWellFormedApiKey(key.slice(0, i) + key[i + 1] + key[i] + key.slice(i + 2)), 'two neighbours swapped')
})

t.test('the hash is hex SHA-256 and compares in constant time', async (t) => {
  const key = 'tg_example'
  t.equal(hashApiKey(key), createHash('sha256').update(key).digest('hex'))
  t.match(hashApiKey(key), /^[0-9a-f]{64}$/)
  t.ok(sameHash(hashApiKey(key), hashApiKey(key)))
  t.notOk(sameHash(hashApiKey(key), hashApiKey(key + 'x')))
  t.notOk(sameHash(hashApiKey(key), hashApiKey(key).slice(1)), 'different lengths: false, no throw')
  const h = hashApiKey(key)
  t.notOk(sameHash(h, h.slice(0, -1) + (h.endsWith('0') ? '1' : '0')), 'only the last character differs')
  t.notOk(sameHash(h, (h.startsWith('0') ? '1' : '0') + h.slice(1)), 'only the first character differs')
})

t.test('crc32 gives the IEEE 802.3 checksum, for ASCII and for other UTF-8 text alike', async (t) => {
  const { crc32 } = await import('../../src/keys/crc32.js')
  const { crc32: zlibCrc32 } = await import('node:zlib')
  t.equal(crc32('123456789'), 0xcbf43926, 'the standard check value')
  t.equal(crc32(''), 0)
  for (const text of ['tg_abcDEF0123456789', 'prix: 5 €', 'ключ', '🔑 key']) {
    t.equal(crc32(text), zlibCrc32(Buffer.from(text, 'utf8')), `the same as zlib for ${JSON.stringify(text)}`)
  }
})

t.test('the one-pass check agrees with the definition (prefix, 38 base62 characters, the CRC-32 of the first 35 in 6 base62 digits)', async (t) => {
  const { crc32 } = await import('../../src/keys/crc32.js')
  const { encodeBase62 } = await import('../../src/keys/base62.js')
  const definition = (s: string): boolean => /^tg_[0-9A-Za-z]{38}$/.test(s) && encodeBase62(BigInt(crc32(s.slice(0, 35))), 6) === s.slice(35)
  // Well-formed keys, and strings that differ from one in one character after the prefix (of the
  // body or of the checksum): another digit, or a character outside the alphabet, ASCII or not
  // (`ſ` is U+017F, which some case-insensitive matchers take for `s`; a lone surrogate half).
  const odd = ['_', '-', ' ', '/', '\u0000', '\u007f', 'é', 'ſ', '🔑'.slice(0, 1)]
  let agreed = 0
  let wellFormed = 0
  for (let i = 0; i < 400; i++) {
    const { key } = generateApiKey()
    const at = 3 + (i % 38)
    // Every third string an odd character, each of them in turn (i / 3, so that all of them come).
    const by = i % 3 === 0 ? odd[(i / 3) % odd.length]! : BASE62_ALPHABET[(i * 7) % 62]!
    for (const s of [key, key.slice(0, at) + by + key.slice(at + 1), key.slice(0, 35) + key.slice(35).split('').reverse().join('')]) {
      t.equal(isWellFormedApiKey(s), definition(s), JSON.stringify(s))
      agreed++
      if (definition(s)) wellFormed++
    }
  }
  t.ok(wellFormed >= 400, `${wellFormed} of ${agreed} strings were well-formed keys (every generated one)`)
})
