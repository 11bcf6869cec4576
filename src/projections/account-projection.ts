import type { TollgateEvent } from '../events/types.js'
import { endsPeriod } from '../accounts/account-state.js'
import type { AccountRecord } from '../store/records.js'
import type { StateWriter } from '../store/state-writer.js'
import type { Projection } from '../store/projection.js'

/** Keeps `accounts` (accountId → AccountRecord) and `wallets` (wallet → accountId). */
export const accountProjection: Projection = {
  name: 'accounts',
  handles: new Set(['AccountCreated', 'JwtKeyRegistered', 'JwtKeyRemoved', 'KeyIssued', 'KeyRevoked', 'NodesSelected', 'PlanActivated', 'PlanEnded']),
  apply(event: TollgateEvent, writer: StateWriter): void {
    switch (event.type) {
      case 'AccountCreated': {
        // The account id is derived from the wallet, so creating twice yields a second
        // AccountCreated for the same account: the first one stands.
        if (writer.account(event.accountId) !== undefined) return
        writer.putAccount({
          accountId: event.accountId,
          wallet: event.wallet.toLowerCase(),
          createdAt: event.time,
          plan: null,
          nodes: [],
          activeKeyId: null,
        })
        return
      }
      case 'PlanActivated':
        return update(writer, event.accountId, (a) => ({
          ...a,
          plan: { planId: event.planId, startsAt: event.startsAt, endsAt: event.endsAt },
        }))
      case 'PlanEnded':
        // Only the period it names: a plan replaced, or renewed, since then is left be.
        return update(writer, event.accountId, (a) => (endsPeriod(event, a.plan) ? { ...a, plan: null } : a))
      case 'NodesSelected':
        return update(writer, event.accountId, (a) => ({
          ...a,
          nodes: event.nodes.map((n) => ({ network: n.network, kind: n.kind })),
        }))
      case 'KeyIssued':
        return update(writer, event.accountId, (a) => ({ ...a, activeKeyId: event.keyId }))
      case 'KeyRevoked':
        // Regenerating issues the new key before revoking the old one: only clear the active
        // key when it is the one revoked.
        return update(writer, event.accountId, (a) => (a.activeKeyId === event.keyId ? { ...a, activeKeyId: null } : a))
      case 'JwtKeyRegistered':
        return update(writer, event.accountId, (a) => ({
          ...a,
          jwtKeys: [...(a.jwtKeys ?? []).filter((k) => k.kid !== event.kid), { kid: event.kid, alg: event.alg, publicKey: event.publicKey }],
        }))
      case 'JwtKeyRemoved':
        return update(writer, event.accountId, (a) => {
          const { jwtKeys, ...rest } = a
          const left = (jwtKeys ?? []).filter((k) => k.kid !== event.kid)
          // No field when none is left: accounts that never registered one keep their exact shape.
          return left.length === 0 ? rest : { ...rest, jwtKeys: left }
        })
      default:
        return
    }
  },
}

/** Read-modify-write one account; events for an account never created are ignored. */
function update(writer: StateWriter, accountId: string, change: (a: AccountRecord) => AccountRecord): void {
  const account = writer.account(accountId)
  if (account === undefined) return
  const next = change(account)
  if (next !== account) writer.putAccount(next)
}
