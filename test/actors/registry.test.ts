import t from 'tap'
import { FakeClock } from '../helpers/fake-clock.js'
import { ActorRegistry } from '../../actors/runtime/registry.js'

function given(options: { canPassivate?: (actor: { key: string }) => boolean } = {}) {
  const clock = new FakeClock()
  const created: string[] = []
  const passivated: string[] = []
  const registry = new ActorRegistry<string, { key: string }>({
    create: (key) => {
      created.push(key)
      return { key }
    },
    clock,
    idleMs: 1000,
    passivate: (actor) => passivated.push(actor.key),
    canPassivate: options.canPassivate,
  })
  return { clock, registry, created, passivated }
}

t.test('activates an actor once, on first use', async (t) => {
  const { registry, created } = given()
  t.equal(registry.peek('a'), undefined)
  const a = registry.get('a')
  t.equal(registry.get('a'), a, 'same actor on the next use')
  t.same(created, ['a'])
  t.equal(registry.size, 1)
})

t.test('passivates actors idle longer than idleMs, and only those', async (t) => {
  const { clock, registry, passivated, created } = given()
  registry.get('a')
  registry.get('b')
  clock.advance(600)
  registry.get('b') // b used again
  clock.advance(600)
  t.equal(registry.sweep(), 1)
  t.same(passivated, ['a'])
  t.notOk(registry.has('a'))
  t.ok(registry.has('b'))
  registry.get('a')
  t.same(created, ['a', 'b', 'a'], 'a comes back as a new activation')
})

t.test('an idle actor that still holds live things is kept', async (t) => {
  const { clock, registry, passivated } = given({ canPassivate: (actor) => actor.key !== 'busy' })
  registry.get('busy')
  registry.get('quiet')
  clock.advance(5000)
  registry.sweep()
  t.same(passivated, ['quiet'])
  t.ok(registry.has('busy'))
})

t.test('delete forgets without the passivate hook; forEach visits all', async (t) => {
  const { registry, passivated } = given()
  registry.get('a')
  registry.get('b')
  t.ok(registry.delete('a'))
  const keys: string[] = []
  registry.forEach((_, key) => {
    keys.push(key)
  })
  t.same(keys, ['b'])
  t.same(passivated, [])
})
