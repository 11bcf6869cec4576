import { createMerkleProof, MerklePatriciaTrie } from '@ethereumjs/mpt'
import { RLP } from '@ethereumjs/rlp'
import fc from 'fast-check'
import t from 'tap'
import { bytesToHex, hexToBytes, keccak256, type Hex } from 'viem'
import { encodeHeader, FORK_FIELDS, headerFork, headerHash, verifyHeader } from '../../src/proofs/header.js'
import { bloomMayMatch, logsBloom } from '../../src/proofs/log-bloom.js'
import { orderedTrieRoot } from '../../src/proofs/ordered-trie.js'
import { hexBytes, hexData } from '../../src/proofs/hex-fields.js'
import type { RpcHeader } from '../../src/proofs/rpc-shapes.js'
import { provenTrieValue } from '../../src/proofs/trie-proof.js'
import { alterHex } from './altered.js'

// Random tries, headers and logs: what the anvil tests cannot reach (tries of hundreds of keys,
// headers of every fork, blooms of any log) checked as properties. A fixed seed, so a failure is
// seen again by running the file again.
const runs = { seed: 40, numRuns: 60 }
const bytes = (min: number, max: number) => fc.uint8Array({ minLength: min, maxLength: max }).map((b) => bytesToHex(b))

t.test('random tries: every key proven present with its value, other keys proven absent, any altered node refused', async (t) => {
  const entries = fc.uniqueArray(fc.tuple(bytes(1, 40), bytes(1, 80)), { minLength: 1, maxLength: 120, selector: ([k]) => k })
  await fc.assert(
    fc.asyncProperty(entries, bytes(1, 40), fc.nat(), async (pairs, other, pick) => {
      // A secure trie (keys hashed), as the state and storage tries are.
      const trie = new MerklePatriciaTrie({ useKeyHashing: true })
      for (const [k, v] of pairs) await trie.put(hexToBytes(k), hexToBytes(v))
      const root = bytesToHex(trie.root())
      const [key, value] = pairs[pick % pairs.length]!
      const proof = (await createMerkleProof(trie, hexToBytes(key))).map((n) => bytesToHex(n))
      const what = { check: 'STORAGE_PROOF', subject: key } as const
      const got = await provenTrieValue(root, key, proof, what)
      if (got === null || bytesToHex(got) !== value) return false
      if (!pairs.some(([k]) => k === other)) {
        const absence = (await createMerkleProof(trie, hexToBytes(other))).map((n) => bytesToHex(n))
        if ((await provenTrieValue(root, other, absence, what)) !== null) return false
      }
      const node = pick % proof.length
      const bad = proof.map((n, i) => (i === node ? alterHex(n) : n))
      return provenTrieValue(root, key, bad, what).then(
        () => false,
        (err) => err.code === 'STORAGE_PROOF',
      )
    }),
    runs,
  )
  t.pass('held')
})

t.test('hex is read as viem reads it, and what is not whole bytes of hex is refused', async (t) => {
  const hexChars = fc.constantFrom(...'0123456789abcdefABCDEF'.split(''))
  const anyChars = fc.constantFrom(...'0123456789abcdefABCDEFxXg .-z\u00e9'.split(''))
  fc.assert(
    fc.property(fc.array(hexChars, { maxLength: 200 }), fc.array(anyChars, { maxLength: 12 }), fc.nat(), (hex, noise, at) => {
      const good = `0x${hex.join('')}`
      const valid = /^0x([0-9a-fA-F]{2})*$/.test(good)
      const read = hexBytes(good)
      if (valid ? read === undefined || bytesToHex(read) !== bytesToHex(hexToBytes(good as Hex)) : read !== undefined) return false
      // hexData: the same text lowercased where hexBytes reads it, refused (by name) where it does not.
      const text = (() => {
        try {
          return hexData(good, 'ACCOUNT_PROOF', 'field')
        } catch {
          return undefined
        }
      })()
      if (text !== (read === undefined ? undefined : bytesToHex(read))) return false
      // The same text with noise put anywhere after "0x": read only when it still is whole bytes of hex.
      const where = 2 + (at % (hex.length + 1))
      const noisy = good.slice(0, where) + noise.join('') + good.slice(where)
      const noisyRead = hexBytes(noisy)
      return /^0x([0-9a-fA-F]{2})*$/.test(noisy) ? noisyRead !== undefined && bytesToHex(noisyRead) === noisy.toLowerCase() : noisyRead === undefined
    }),
    { ...runs, numRuns: 2_000 },
  )
  t.equal(hexBytes('ab01'), undefined, 'no 0x: refused')
  t.equal(hexBytes('0Xab'), undefined, '0X: refused')
  t.throws(() => hexData('0xab', 'ACCOUNT_PROOF', 'codeHash', 32), { code: 'ACCOUNT_PROOF' }, 'hexData: a length other than asked is refused')
  t.same([...hexBytes('0x')!], [], '0x: no bytes')
})

t.test("an ordered list's root does not depend on the order of insertion, and changes with any item", async (t) => {
  await fc.assert(
    fc.asyncProperty(fc.array(bytes(1, 60), { minLength: 1, maxLength: 80 }), fc.nat(), async (items, pick) => {
      const root = await orderedTrieRoot(items.map((i) => hexToBytes(i)))
      const trie = new MerklePatriciaTrie()
      for (let i = items.length - 1; i >= 0; i--) await trie.put(RLP.encode(i), hexToBytes(items[i]!))
      const changed = items.map((item, i) => (i === pick % items.length ? alterHex(item) : item))
      return bytesToHex(trie.root()) === root && (await orderedTrieRoot(changed.map((i) => hexToBytes(i)))) !== root
    }),
    runs,
  )
  t.pass('held')
})

const quantity = fc.bigInt({ min: 0n, max: 2n ** 64n }).map((n) => `0x${n.toString(16)}` as Hex)
const hash = bytes(32, 32)
const baseHeader = fc.record({
  parentHash: hash,
  sha3Uncles: hash,
  miner: bytes(20, 20),
  stateRoot: hash,
  transactionsRoot: hash,
  receiptsRoot: hash,
  logsBloom: bytes(256, 256),
  difficulty: quantity,
  number: quantity,
  gasLimit: quantity,
  gasUsed: quantity,
  timestamp: quantity,
  extraData: bytes(0, 32),
  mixHash: hash,
  nonce: bytes(8, 8),
})
const forkValues = fc.tuple(quantity, hash, quantity, quantity, hash, hash)

const QUANTITIES = new Set([
  'difficulty',
  'number',
  'gasLimit',
  'gasUsed',
  'timestamp',
  ...FORK_FIELDS.filter((f) => f.kind === 'quantity').map((f) => f.field),
])

/** An RLP item is the field's value: a number as minimal bytes (none for zero), other bytes as they are. */
function sameValue(item: Uint8Array, hex: Hex, field: string): boolean {
  if (!QUANTITIES.has(field)) return bytesToHex(item) === hex
  return item[0] !== 0 && (item.length === 0 ? 0n : BigInt(bytesToHex(item))) === BigInt(hex)
}

t.test('random headers of each fork: the RLP round-trips field for field and the hash checks', async (t) => {
  for (let count = 0; count <= FORK_FIELDS.length; count++) {
    fc.assert(
      fc.property(baseHeader, forkValues, fc.nat(), (base, values, pick) => {
        const header = { ...base, hash: '0x' } as RpcHeader
        for (const [i, f] of FORK_FIELDS.slice(0, count).entries()) Object.assign(header, { [f.field]: values[i] })
        header.hash = headerHash(header)
        const encoded = encodeHeader(header)
        const items = RLP.decode(encoded) as Uint8Array[]
        const names = [...Object.keys(base), ...FORK_FIELDS.slice(0, count).map((f) => f.field)] as (keyof RpcHeader)[]
        const roundTrips = items.length === 15 + count && names.every((name, i) => sameValue(items[i]!, header[name]!, name))
        const field = names[pick % names.length]!
        let refused = false
        try {
          verifyHeader({ ...header, [field]: alterHex(header[field]) })
        } catch (err) {
          refused = (err as { code: string }).code === 'HEADER_HASH'
        }
        return roundTrips && keccak256(encoded) === header.hash && verifyHeader(header) === header.hash && refused
      }),
      runs,
    )
    t.pass(`${count === 0 ? 'frontier' : FORK_FIELDS[count - 1]!.fork} headers (${15 + count} fields)`)
  }
  const prague = { ...fc.sample(baseHeader, { seed: 1, numRuns: 1 })[0]!, hash: '0x' } as RpcHeader
  const pragueValues = fc.sample(forkValues, { seed: 2, numRuns: 1 })[0]!
  for (const [i, f] of FORK_FIELDS.entries()) Object.assign(prague, { [f.field]: pragueValues[i] })
  for (const f of FORK_FIELDS.slice(0, -1)) {
    t.throws(() => headerHash({ ...prague, [f.field]: undefined }), { code: 'HEADER_FIELDS' }, `${f.field} missing before later fields: refused`)
  }
})

t.test("a fixed header: Ethereum mainnet's genesis (frontier)", async (t) => {
  const genesis = {
    hash: '0xd4e56740f876aef8c010b86a40d5f56745a118d0906a34e69aec8c0db1cb8fa3',
    parentHash: `0x${'00'.repeat(32)}`,
    sha3Uncles: '0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347',
    miner: `0x${'00'.repeat(20)}`,
    stateRoot: '0xd7f8974fb5ac78d9ac099b9ad5018bedc2ce0a72dad1827a1709da30580f0544',
    transactionsRoot: '0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421',
    receiptsRoot: '0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421',
    logsBloom: `0x${'00'.repeat(256)}`,
    difficulty: '0x400000000',
    number: '0x0',
    gasLimit: '0x1388',
    gasUsed: '0x0',
    timestamp: '0x0',
    extraData: '0x11bbe8db4e347b4e8c937c1c8370e4b5ed33adb3db69cbdb7a38e1e50b1b82fa',
    mixHash: `0x${'00'.repeat(32)}`,
    nonce: '0x0000000000000042',
  } as RpcHeader
  t.equal(headerFork(genesis), 'frontier')
  t.equal(verifyHeader(genesis), genesis.hash)
})

t.test('a log bloom has no false negatives: every filter made from a log matches the bloom of logs that hold it', async (t) => {
  const topic = hash
  const log = fc.record({ address: bytes(20, 20), topics: fc.array(topic, { maxLength: 4 }) })
  fc.assert(
    fc.property(fc.array(log, { minLength: 1, maxLength: 20 }), fc.nat(), fc.array(topic, { maxLength: 3 }), (logs, pick, noise) => {
      const bloom = logsBloom(logs)
      const one = logs[pick % logs.length]!
      // Positions left null, OR-lists holding the log's topic among others, an address list: all must match.
      const topics = one.topics.map((tp, i) => (i % 2 === 1 ? null : [...noise, tp]))
      return (
        bloomMayMatch(bloom, { address: one.address, topics: one.topics }) &&
        bloomMayMatch(bloom, { address: [...noise.map((n) => n.slice(0, 42) as Hex), one.address], topics }) &&
        bloomMayMatch(bloom, {}) &&
        bloomMayMatch(bloom, { address: [], topics: [null, []] })
      )
    }),
    runs,
  )
  t.notOk(bloomMayMatch(new Uint8Array(256), { address: `0x${'11'.repeat(20)}` }), 'an empty bloom matches no address')
})
