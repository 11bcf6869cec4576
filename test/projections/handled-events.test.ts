import t from 'tap'
import { eventSchemas } from '../../schemas/events.js'
import { NOT_PROJECTED, PROJECTIONS } from '../../src/projections/projector.js'

// Every event type of the catalog is folded by some projection, or named as not projected with
// its reason: a new event type cannot be added and forgotten by the state store.

const types = Object.keys(eventSchemas)

t.test('each event type is handled by a projection or named as not projected', async (t) => {
  t.ok(types.length >= 20, `${types.length} event types in the catalog`)
  const orphans = types.filter((type) => !PROJECTIONS.some((p) => p.handles.has(type as never)) && !(type in NOT_PROJECTED))
  t.same(orphans, [], 'no event type is left out')
  const both = Object.keys(NOT_PROJECTED).filter((type) => PROJECTIONS.some((p) => p.handles.has(type as never)))
  t.same(both, [], 'what is named as not projected is not projected')
})

t.test('what the projections name are event types of the catalog', async (t) => {
  for (const p of PROJECTIONS)
    t.same(
      [...p.handles].filter((type) => !types.includes(type)),
      [],
      `${p.name} names only known types`,
    )
  t.same(
    Object.keys(NOT_PROJECTED).filter((type) => !types.includes(type)),
    [],
    'NOT_PROJECTED names only known types',
  )
  for (const [type, why] of Object.entries(NOT_PROJECTED)) t.ok((why ?? '').length > 20, `${type}: says why`)
})
