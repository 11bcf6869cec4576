import { Mailbox } from '../../actors/runtime/mailbox.js'
import type { EventLog } from '../events/log.js'
import { WrongExpectedVersion } from '../events/errors.js'
import type { TollgateEvent } from '../events/types.js'
import type { PlanCatalog } from '../plans/catalog.js'
import { evolve, initialAccountState, type AccountState } from './account-state.js'
import { decide, type AccountCommand } from './decide.js'

/** Decisions refused by the log in a row before a command gives up (each one means another command won). */
const MAX_ATTEMPTS = 5

/**
 * Accounts whose folded state a host keeps (least recently used out). A state is a few KB (its
 * keys, invoices, live sessions, recent nonces); without it every command read and folded the
 * account's whole stream through a new consumer, and a stream grows with every sign-in.
 */
const MAX_CACHED_ACCOUNTS = 2_000

/**
 * What brings the caller's store up to the log (the Projector of src/projections/, which sits
 * above this folder: it folds events with this folder's rules, so it is named here by what it does).
 */
export interface CatchesUp {
  catchUp(): Promise<unknown>
}

export interface AccountHostDeps {
  log: EventLog
  catalog: PlanCatalog
  /**
   * A projector of `log` into the caller's store: caught up after each command that appended,
   * so that the caller reads its own writes (a key works, the dashboard shows the change).
   */
  projector?: CatchesUp
}

/** What a command did: the events appended (none: nothing to do) and the account after them. */
export interface Executed {
  events: TollgateEvent[]
  state: AccountState
}

interface Job {
  run: () => Promise<void>
}

/** An account's state as folded up to `version` of its stream. */
interface Folded {
  state: AccountState
  version: number
}

/**
 * Runs account commands: decide on the account's state, append at the version that state was
 * folded at. The host keeps the states it folded: a command decides on the kept state and appends
 * at its version, reading nothing; the log refuses the append when another command (in this
 * process or another instance) appended meanwhile, and only then are the new events read (those
 * past the kept version) and the command decided again. A refusal or "nothing to do" decided on a
 * kept state is checked against the log's new events first: it may be stale. In this process one
 * account's commands go through its mailbox, one at a time, so a double click does not even reach
 * the log twice.
 * @example
 * const { events } = await host.execute(accountId, { type: 'SignOut', sessionHash, now })
 */
export class AccountHost {
  readonly #deps: AccountHostDeps
  readonly #mailboxes = new Map<string, Mailbox<Job>>()
  /** Folded states by account, least recently used first. */
  readonly #folded = new Map<string, Folded>()

  constructor(deps: AccountHostDeps) {
    this.#deps = deps
  }

  /** The account as its stream says now (reads only what is new since the state kept). Do not change it. */
  async load(accountId: string): Promise<AccountState> {
    return (await this.#catchUp(accountId)).state
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
    const kept = this.#kept(accountId)
    let folded = kept ?? (await this.#catchUp(accountId))
    /** Whether `folded` was read from the log by this command (else it may be stale). */
    let current = kept === undefined
    /** Catch up; whether the log had anything new. */
    const readNew = async (): Promise<boolean> => {
      const before = folded.version
      folded = await this.#catchUp(accountId)
      current = true
      return folded.version !== before
    }
    for (let attempt = 1; ; attempt++) {
      let events: TollgateEvent[]
      try {
        events = decide(command, folded.state, { catalog })
      } catch (err) {
        if (!current && (await readNew())) continue
        throw err
      }
      if (events.length === 0) {
        if (!current && (await readNew())) continue
        return { events, state: folded.state }
      }
      let version: number
      try {
        version = await log.appendToAccount(accountId, events, folded.version)
      } catch (err) {
        if (err instanceof WrongExpectedVersion && attempt < MAX_ATTEMPTS) {
          await readNew()
          continue
        }
        // Cut part-way (the log unreachable): what was stored is read by the next command's catch-up.
        throw err
      }
      const state = events.reduce(evolve, folded.state)
      this.#keep(accountId, { state, version })
      await projector?.catchUp()
      return { events, state }
    }
  }

  /** The kept state, as the most recently used. */
  #kept(accountId: string): Folded | undefined {
    const folded = this.#folded.get(accountId)
    if (folded !== undefined) this.#keep(accountId, folded)
    return folded
  }

  /** Read what is new past the kept state (all of the stream when none is kept), fold it in, keep it. */
  async #catchUp(accountId: string): Promise<Folded> {
    const kept = this.#folded.get(accountId)
    const { events, version } = await this.#deps.log.readAccount(accountId, kept?.version ?? 0)
    const state = events.reduce((s, e) => evolve(s, e.event), kept?.state ?? initialAccountState(accountId))
    const folded: Folded = { state, version }
    this.#keep(accountId, folded)
    return folded
  }

  #keep(accountId: string, folded: Folded): void {
    this.#folded.delete(accountId)
    this.#folded.set(accountId, folded)
    if (this.#folded.size > MAX_CACHED_ACCOUNTS) this.#folded.delete(this.#folded.keys().next().value!)
  }
}
