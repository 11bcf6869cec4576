import { Mailbox } from '../../actors/runtime/mailbox.js'
import { WrongExpectedVersion, type EventLog } from '../events/log.js'
import type { TollgateEvent } from '../events/types.js'
import type { PlanCatalog } from '../plans/catalog.js'
import type { Projector } from '../projections/projector.js'
import { evolve, foldAccount, type AccountState } from './account-state.js'
import { decide, type AccountCommand } from './decide.js'

/** Decisions refused by the log in a row before a command gives up (each one means another command won). */
const MAX_ATTEMPTS = 5

export interface AccountHostDeps {
  log: EventLog
  catalog: PlanCatalog
  /**
   * A projector of `log` into the caller's store: caught up after each command that appended,
   * so that the caller reads its own writes (a key works, the dashboard shows the change).
   */
  projector?: Projector
}

/** What a command did: the events appended (none: nothing to do) and the account after them. */
export interface Executed {
  events: TollgateEvent[]
  state: AccountState
}

interface Job {
  run: () => Promise<void>
}

/**
 * Runs account commands: load the account by folding its own stream, decide, append at the
 * version the state was folded at. Another command that appended meanwhile (in this process or
 * another instance) makes the log refuse the append; the command is then decided again on the
 * new state. In this process one account's commands go through its mailbox, one at a time, so a
 * double click does not even reach the log twice.
 * @example
 * const { events } = await host.execute(accountId, { type: 'SignOut', sessionHash, now })
 */
export class AccountHost {
  readonly #deps: AccountHostDeps
  readonly #mailboxes = new Map<string, Mailbox<Job>>()

  constructor(deps: AccountHostDeps) {
    this.#deps = deps
  }

  /** The account as its stream says now (for a query; a command decides on its own load). */
  async load(accountId: string): Promise<AccountState> {
    const { events } = await this.#deps.log.readAccount(accountId)
    return foldAccount(
      accountId,
      events.map((s) => s.event),
    )
  }

  /** Decide `command` for the account and append what it decides; throws the decider's refusals. */
  execute(accountId: string, command: AccountCommand): Promise<Executed> {
    return new Promise((resolve, reject) => {
      const job: Job = { run: () => this.#decideAndAppend(accountId, command).then(resolve, reject) }
      let box = this.#mailboxes.get(accountId)
      if (box === undefined) {
        box = new Mailbox<Job>((j) => j.run())
        this.#mailboxes.set(accountId, box)
      }
      box.send(job)
      // The mailbox is dropped once it has nothing left to do (accounts are many, commands rare).
      void box.idle().then(() => {
        if (this.#mailboxes.get(accountId) === box && box.size === 0 && box.status === 'idle') this.#mailboxes.delete(accountId)
      })
    })
  }

  async #decideAndAppend(accountId: string, command: AccountCommand): Promise<Executed> {
    const { log, catalog, projector } = this.#deps
    for (let attempt = 1; ; attempt++) {
      const { events: stored, version } = await log.readAccount(accountId)
      const state = foldAccount(
        accountId,
        stored.map((s) => s.event),
      )
      const events = decide(command, state, { catalog })
      if (events.length === 0) return { events, state }
      try {
        await log.appendToAccount(accountId, events, version)
      } catch (err) {
        if (err instanceof WrongExpectedVersion && attempt < MAX_ATTEMPTS) continue
        throw err
      }
      await projector?.catchUp()
      return { events, state: events.reduce(evolve, state) }
    }
  }
}
