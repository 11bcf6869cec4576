import { join } from 'node:path'
import t from 'tap'
import { EmbeddedLog } from '../../src/events/embedded-log.js'
import type { EventLog } from '../../src/events/log.js'
import { Projector } from '../../src/projections/projector.js'
import { StateStore } from '../../src/store/state-store.js'
import { accountWithKey, T0, tempDir, usageEvent } from './fixtures.js'

// A command's catch-up on the store a live gateway projects into (the same data folder, another
// process): the gateway's projector may apply events appended after the command learnt the log's
// end and before it reads the store's checkpoint. The log here is a real embedded log; what the
// wrapper adds is that interleaving, every time, where a loaded machine gives it now and then:
// between the log's answer to lastSeq and the caller seeing it, another writer appends and the
// gateway's projector applies what it appended.

/** `log`, whose answer to lastSeq reaches the caller only after `meanwhile` ran (once). */
function logWithWriterBetween(log: EventLog, meanwhile: () => Promise<void>): EventLog {
  let ran = false
  return new Proxy(log, {
    get(target, name, receiver) {
      if (name !== 'lastSeq') {
        const value = Reflect.get(target, name, receiver)
        return typeof value === 'function' ? value.bind(target) : value
      }
      return async () => {
        const seq = await target.lastSeq()
        if (!ran) {
          ran = true
          await meanwhile()
        }
        return seq
      }
    },
  })
}

t.test("a catch-up is not refused when the gateway's projector moves past the log's end it read", async (t) => {
  const dir = tempDir(t, 'beside')
  const log = EmbeddedLog.open(join(dir, 'log'))
  const store = StateStore.open(join(dir, 'state'))
  t.teardown(async () => {
    store.close()
    await log.close()
  })
  const { events, key } = accountWithKey('acc_1', `0x${'1'.repeat(40)}`)
  await log.append(events)
  const gateway = new Projector(store, log)
  await gateway.catchUp()
  const usage = usageEvent({ accountId: 'acc_1', keyId: key.keyId, intervalStart: T0, requests: 4 })
  const command = new Projector(
    store,
    logWithWriterBetween(log, async () => {
      await log.append([usage])
      await gateway.catchUp()
    }),
  )
  const reached = await command.catchUp().then(
    (seq) => seq,
    (err: Error) => err,
  )
  t.notOk(reached instanceof Error, `resolves: ${reached instanceof Error ? `${reached.name}: ${reached.message}` : reached}`)
  t.equal(store.checkpoint(), 4, 'the store has every event the log holds, the usage applied once by the gateway')
  // And the catch-up after it sees the usage as applied: nothing more, nothing twice.
  t.equal(await new Projector(store, log).catchUp(), 4)
})
