import t from 'tap'
import type { Hex } from 'viem'
import { verifyHeader } from '../../src/proofs/header.js'
import type { RpcAccountProof, RpcBlock } from '../../src/proofs/rpc-shapes.js'
import { balanceAnswer, codeAnswer, storageAtAnswer, transactionCountAnswer } from '../../src/proofs/state-answers.js'
import { verifyStateProof } from '../../src/proofs/state-proof.js'
import { busyAnvil } from '../helpers/busy-chain.js'
import { altered, alterHex } from './altered.js'

// eth_getProof answers of a real anvil pass against the state root of the (hash-checked) header
// of their block, the state reads made from them are byte for byte what anvil answers, and every
// alteration of a value, a proof node or the block is refused.

const { busy, call } = await busyAnvil(t)
const slots = [busy.slots.totalSupply, busy.slots.balanceOfDelegated, busy.slots.unset]
const accounts = { eoa: busy.eoa, absent: busy.absent, token: busy.token, emitter: busy.emitter, delegated: busy.delegated }

t.test('proofs of every kind of account pass, and the answers made from them are the node answers', async (t) => {
  // From block 1: anvil's genesis header names the empty state root while its genesis state has the
  // funded accounts, so no proof at block 0 matches its header (the check refuses them, rightly).
  for (const n of [1, Math.floor(busy.head / 2), busy.head]) {
    const tag = `0x${n.toString(16)}`
    const header: RpcBlock = await call('eth_getBlockByNumber', [tag, false])
    verifyHeader(header)
    for (const [name, address] of Object.entries(accounts)) {
      const account = await verifyStateProof(await call('eth_getProof', [address, slots, tag]), header.stateRoot, { address, storageKeys: slots })
      const at = `${name} at block ${n}`
      if (n === busy.head) t.equal(account.exists, name !== 'absent', `${at}: exists, or is proven absent`)
      t.equal(balanceAnswer(account), await call('eth_getBalance', [address, tag]), `${at}: eth_getBalance`)
      t.equal(transactionCountAnswer(account), await call('eth_getTransactionCount', [address, tag]), `${at}: eth_getTransactionCount`)
      t.equal(codeAnswer(await call('eth_getCode', [address, tag]), account), await call('eth_getCode', [address, tag]), `${at}: eth_getCode`)
      for (const slot of slots) t.equal(storageAtAnswer(account, slot), await call('eth_getStorageAt', [address, slot, tag]), `${at}: eth_getStorageAt ${slot}`)
    }
  }
  const token = await verifyStateProof(
    await call('eth_getProof', [busy.token, slots, 'latest']),
    (await call('eth_getBlockByNumber', ['latest', false])).stateRoot,
  )
  t.equal(token.storage.get(busy.slots.totalSupply), 10n ** 24n, 'the set slot is proven with its value')
  t.equal(token.storage.get(busy.slots.balanceOfDelegated), 5n, "a mapping's slot is proven with its value")
  t.equal(token.storage.get(busy.slots.unset), 0n, 'an unset slot is proven 0')
  const delegated = await verifyStateProof(
    await call('eth_getProof', [busy.delegated, [], 'latest']),
    (await call('eth_getBlockByNumber', ['latest', false])).stateRoot,
  )
  t.equal(
    codeAnswer(await call('eth_getCode', [busy.delegated, 'latest']), delegated),
    `0xef0100${busy.emitter.slice(2).toLowerCase()}`,
    "a 7702 account's code is its delegation",
  )
})

t.test('an altered value, proof node, block or address is refused', async (t) => {
  const header: RpcBlock = await call('eth_getBlockByNumber', ['latest', false])
  const proof: RpcAccountProof = await call('eth_getProof', [busy.token, slots, 'latest'])
  const root = header.stateRoot
  const refused = (what: string, answer: RpcAccountProof, code: string, stateRoot: Hex = root) => t.rejects(verifyStateProof(answer, stateRoot), { code }, what)

  await refused('a balance', altered(proof, 'balance'), 'ACCOUNT_PROOF')
  await refused('a nonce', altered(proof, 'nonce'), 'ACCOUNT_PROOF')
  await refused('a storage hash', altered(proof, 'storageHash'), 'ACCOUNT_PROOF')
  await refused('a code hash', altered(proof, 'codeHash'), 'ACCOUNT_PROOF')
  for (let i = 0; i < proof.accountProof.length; i++) {
    await refused(`account proof node ${i} of ${proof.accountProof.length}`, { ...proof, accountProof: altered(proof.accountProof, i) }, 'ACCOUNT_PROOF')
  }
  await refused('an account proof node left out', { ...proof, accountProof: proof.accountProof.slice(0, -1) }, 'ACCOUNT_PROOF')
  const slotChanged = (i: number, edit: (p: RpcAccountProof['storageProof'][number]) => object) => ({
    ...proof,
    storageProof: proof.storageProof.map((p, j) => (j === i ? { ...p, ...edit(p) } : p)),
  })
  await refused(
    'a storage value',
    slotChanged(0, (p) => ({ value: alterHex(p.value) })),
    'STORAGE_PROOF',
  )
  await refused(
    'an unset slot claimed set',
    slotChanged(2, () => ({ value: '0x1' })),
    'STORAGE_PROOF',
  )
  await refused(
    'a storage proof node',
    slotChanged(1, (p) => ({ proof: altered(p.proof, p.proof.length - 1) })),
    'STORAGE_PROOF',
  )
  await refused(
    "another slot's proof",
    slotChanged(0, () => ({ proof: proof.storageProof[1]!.proof })),
    'STORAGE_PROOF',
  )

  // A proof of an earlier block against the latest header's root: every node up to the changed leaf differs.
  const older: RpcAccountProof = await call('eth_getProof', [busy.token, slots, `0x${(busy.head - 3).toString(16)}`])
  await refused('a proof of another block', older, 'ACCOUNT_PROOF')
  await refused("this block's proof against another block's root", proof, 'ACCOUNT_PROOF', (await call('eth_getBlockByNumber', ['0x1', false])).stateRoot)

  const absent: RpcAccountProof = await call('eth_getProof', [busy.absent, [], 'latest'])
  await refused('an absent account given a balance', { ...absent, balance: '0x1' }, 'ACCOUNT_PROOF')
  const eoa: RpcAccountProof = await call('eth_getProof', [busy.eoa, [], 'latest'])
  await refused("an existing account answered with an absent one's proof", { ...eoa, accountProof: absent.accountProof }, 'ACCOUNT_PROOF')
  await t.rejects(verifyStateProof(eoa, root, { address: busy.absent, storageKeys: [] }), { code: 'ACCOUNT_PROOF' }, 'another address answered')
  await t.rejects(
    verifyStateProof(proof, root, { address: busy.token, storageKeys: [slots[1]!, slots[0]!, slots[2]!] }),
    { code: 'STORAGE_PROOF' },
    'slots answered out of order',
  )

  const account = await verifyStateProof(proof, root)
  const code: Hex = await call('eth_getCode', [busy.token, 'latest'])
  t.throws(() => codeAnswer(altered({ code }, 'code').code as Hex, account), { code: 'CODE_HASH' }, 'code altered')
  t.throws(() => codeAnswer('0x', account), { code: 'CODE_HASH' }, 'code left out')
  t.throws(() => storageAtAnswer(account, '0x1234'), RangeError, 'a slot the proof did not cover is not answered')
})
