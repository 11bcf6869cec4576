import t from 'tap'
import { Mailbox } from '../../actors/runtime/mailbox.js'

t.test('a synchronous handler with an empty mailbox runs inline', async (t) => {
  const seen: number[] = []
  const box = new Mailbox<number>((n) => {
    seen.push(n)
  })
  box.send(1)
  t.same(seen, [1], 'handled before send() returned')
  t.equal(box.status, 'idle')
})

t.test('an async handler holds the next messages, which run in arrival order', async (t) => {
  const log: string[] = []
  const gates: Array<() => void> = []
  const box = new Mailbox<string>(async (m) => {
    log.push(`start ${m}`)
    await new Promise<void>((resolve) => gates.push(resolve))
    log.push(`end ${m}`)
  })
  box.send('a')
  box.send('b')
  box.send('c')
  t.equal(box.status, 'busy')
  t.equal(box.size, 2)
  t.same(log, ['start a'], 'b waits for a')
  while (log.length < 6) {
    gates.shift()!()
    await new Promise((resolve) => setImmediate(resolve))
  }
  await box.idle()
  t.same(log, ['start a', 'end a', 'start b', 'end b', 'start c', 'end c'])
  t.equal(box.status, 'idle')
})

t.test('a message sent from inside a handler is handled after it, not nested in it', async (t) => {
  const log: string[] = []
  const box: Mailbox<string> = new Mailbox<string>((m) => {
    log.push(`start ${m}`)
    if (m === 'a') box.send('b')
    log.push(`end ${m}`)
  })
  box.send('a')
  t.same(log, ['start a', 'end a', 'start b', 'end b'])
})

t.test('a throwing handler fails the mailbox, is reported, and never reaches the sender', async (t) => {
  const errors: Array<[unknown, string]> = []
  const handled: string[] = []
  const box = new Mailbox<string>(
    (m) => {
      if (m === 'bad') throw new Error('boom')
      handled.push(m)
    },
    { onError: (error, msg) => errors.push([error, msg]) },
  )
  t.equal(box.send('ok'), true)
  t.doesNotThrow(() => box.send('bad'))
  t.equal(box.status, 'failed')
  t.equal(errors.length, 1)
  t.match(errors[0], [{ message: 'boom' }, 'bad'])
  t.equal(box.send('later'), false, 'a failed mailbox drops messages')
  t.same(handled, ['ok'])
  await box.idle() // resolves: a failed mailbox is not busy
})

t.test('a rejected promise fails the mailbox and drops what was queued; other mailboxes go on', async (t) => {
  const errors: unknown[] = []
  const handled: string[] = []
  const failing = new Mailbox<string>(
    async (m) => {
      await Promise.resolve()
      if (m === 'bad') throw new Error('async boom')
      handled.push(m)
    },
    { onError: (error) => errors.push(error) },
  )
  const healthy = new Mailbox<string>((m) => {
    handled.push(`healthy ${m}`)
  })
  failing.send('bad')
  failing.send('queued')
  await failing.idle()
  healthy.send('x')
  t.equal(failing.status, 'failed')
  t.match(errors, [{ message: 'async boom' }])
  t.same(handled, ['healthy x'])
  t.equal(healthy.status, 'idle')
})

t.test('an onError that throws does not escape either', async (t) => {
  const box = new Mailbox<number>(
    () => {
      throw new Error('handler')
    },
    {
      onError: () => {
        throw new Error('reporter')
      },
    },
  )
  t.doesNotThrow(() => box.send(1))
  t.equal(box.status, 'failed')
})
