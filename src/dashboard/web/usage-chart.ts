import { fill, h, svg } from './dom'
import { REFUSAL_RULES, type Usage } from './api'
import type { AppState } from './state'

const COLORS = ['#1f6feb', '#d97706', '#15803d', '#b91c1c', '#7c3aed', '#0e7490', '#a16207', '#be185d']

/** Calls per hour, stacked by network and node kind, as an SVG bar chart with a table beside it for screen readers. */
export function renderUsage(state: AppState): void {
  const usage = state.usage
  if (!state.me) return fill('usage', h('p', { class: 'hint' }, 'Connect your wallet to see your calls per hour.'))
  if (!usage) return fill('usage', h('p', {}, 'Loading usage…'))
  const hours = usage.hours
  const totals = new Array<number>(hours).fill(0)
  const units = new Array<number>(hours).fill(0)
  for (const s of usage.series) {
    s.requests.forEach((n, i) => {
      totals[i] += n
    })
    s.units.forEach((n, i) => {
      units[i] += n
    })
  }
  const sum = totals.reduce((a, b) => a + b, 0)
  const unitSum = units.reduce((a, b) => a + b, 0)
  const max = Math.max(1, ...totals)
  const width = 720
  const height = 220
  const left = 44
  const bottom = 24
  const barW = (width - left) / hours
  const y = (n: number) => (height - bottom) * (1 - n / max)

  const bars: SVGElement[] = []
  for (let i = 0; i < hours; i++) {
    let base = 0
    usage.series.forEach((s, k) => {
      const n = s.requests[i]
      if (n === 0) return
      const top = y(base + n)
      bars.push(
        svg(
          'rect',
          { x: left + i * barW + 1, y: top, width: Math.max(1, barW - 2), height: y(base) - top, fill: COLORS[k % COLORS.length] },
          svg('title', {}, `${label(usage.from + i * usage.hourMs)}: ${n} calls, ${s.units[i]} units (${s.network} ${s.kind})`),
        ),
      )
      base += n
    })
  }
  const ticks: SVGElement[] = []
  for (let i = 0; i < hours; i += Math.max(1, Math.ceil(hours / 8))) {
    ticks.push(svg('text', { x: left + i * barW + barW / 2, y: height - 6, 'text-anchor': 'middle', class: 'tick' }, label(usage.from + i * usage.hourMs)))
  }
  const chart = svg(
    'svg',
    { viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-labelledby': 'usage-summary', class: 'chart' },
    svg('line', { x1: left, y1: height - bottom, x2: width, y2: height - bottom, class: 'axis' }),
    svg('text', { x: left - 6, y: 12, 'text-anchor': 'end', class: 'tick' }, String(max)),
    svg('text', { x: left - 6, y: height - bottom, 'text-anchor': 'end', class: 'tick' }, '0'),
    ...bars,
    ...ticks,
  )
  fill(
    'usage',
    h(
      'p',
      { id: 'usage-summary', 'data-field': 'usage-total' },
      sum === 0
        ? `0 calls in the last ${hours} hours: calls made with your key appear here within seconds.`
        : `${sum} call${sum === 1 ? '' : 's'} in the last ${hours} hours, ${unitSum} compute unit${unitSum === 1 ? '' : 's'}; calls per hour by network and node kind.`,
    ),
    refusals(usage),
    chart,
    h('ul', { class: 'legend' }, ...usage.series.map((s, k) => h('li', {}, h('span', { class: `swatch c${k % COLORS.length}` }), `${s.network} ${s.kind}`))),
    h(
      'details',
      {},
      h('summary', {}, 'Show as a table'),
      h(
        'table',
        {},
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            h('th', { scope: 'col' }, 'Hour'),
            ...usage.series.map((s) => h('th', { scope: 'col' }, `${s.network} ${s.kind}`)),
            h('th', { scope: 'col' }, 'Units'),
          ),
        ),
        h(
          'tbody',
          {},
          ...totals.map((_, i) =>
            h(
              'tr',
              {},
              h('th', { scope: 'row' }, label(usage.from + i * usage.hourMs)),
              ...usage.series.map((s) => h('td', {}, s.requests[i])),
              h('td', { 'data-field': 'usage-units' }, units[i]),
            ),
          ),
        ),
      ),
    ),
  )
}

/** What the rules set under My Subscription refused in these hours, by rule: a small table, or a line when none. */
function refusals(usage: Usage): HTMLElement {
  const refused = usage.refused ?? {}
  const rules = REFUSAL_RULES.filter((rule) => (refused[rule] ?? 0) > 0)
  if (rules.length === 0)
    return h('p', { class: 'hint', 'data-field': 'refused' }, `No call was refused by your key's restrictions in the last ${usage.hours} hours.`)
  return h(
    'div',
    { class: 'refused', 'data-field': 'refused' },
    h('p', { id: 'refused-title' }, `Calls refused by your key's restrictions in the last ${usage.hours} hours (HTTP 403), by rule:`),
    h(
      'table',
      { 'aria-labelledby': 'refused-title' },
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Rule'), h('th', { scope: 'col' }, 'Calls refused'))),
      h('tbody', {}, ...rules.map((rule) => h('tr', { 'data-rule': rule }, h('th', { scope: 'row' }, rule), h('td', {}, refused[rule])))),
    ),
  )
}

function label(ms: number): string {
  return new Date(ms).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' })
}
