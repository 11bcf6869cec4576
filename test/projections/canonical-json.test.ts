import t from 'tap'
import { canonicalJson } from '../../src/projections/replay.js'

/** What the digest's canonical form is defined as: JSON.stringify of a copy with every object's keys sorted. */
function reference(value: unknown): string {
  const sorted = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sorted)
    if (v === null || typeof v !== 'object') return v
    const out: Record<string, unknown> = {}
    for (const k of Object.keys(v).sort()) out[k] = sorted((v as Record<string, unknown>)[k])
    return out
  }
  return JSON.stringify(sorted(value)) ?? 'null'
}

t.test('canonicalJson writes JSON.stringify of the value with its keys sorted, row after row of shapes that come and go', async (t) => {
  const rows: unknown[] = [
    { requests: 3, errors: 0, bytesIn: 270, bytesOut: 900, units: 3 },
    { requests: 4, errors: 1, bytesIn: 360, bytesOut: 1200, units: 4 },
    // The same keys in another order: the shape of the row before must not be taken for it.
    { units: 1, bytesOut: 2, bytesIn: 3, errors: 4, requests: 5 },
    { requests: 1, errors: 0, units: 1 },
    { requests: 1, errors: 0, bytesIn: 1, bytesOut: 2, units: 3, refused: { origin: 2, 'ip-allowlist': 1 } },
    // As many keys as the first shape, other names.
    { a: 1, c: 2, b: 3, e: 4, d: 5 },
    { requests: 3, errors: 0, bytesIn: 270, bytesOut: 900, units: 3 },
    // Properties JSON leaves out, and their commas with them.
    { b: undefined, a: 1, c: () => 1, d: Symbol('x'), e: 'x' },
    { requests: undefined, errors: 0, bytesIn: 270, bytesOut: 900, units: 3 },
    { only: undefined },
    { 'a "quoted" name': 'a "quoted" value', '\u00e9': '\n' },
    [{ z: 1, y: [2, { x: null, w: true }] }, 'text', 1.5, -0, Number.NaN, Number.POSITIVE_INFINITY, false],
    {},
    'plain',
    12,
    null,
  ]
  for (const row of rows) t.equal(canonicalJson(row), reference(row), JSON.stringify(row) ?? String(row))
  // Every row again, in reverse: what was met before changes nothing.
  for (const row of [...rows].reverse()) t.equal(canonicalJson(row), reference(row))
})
