/**
 * A small Prometheus registry: counters and gauges with labels, rendered in the text format at
 * GET /metrics. Kept in-process and allocation-light: a counter increment on the request path is
 * one Map lookup by a label key the caller builds once.
 */
type Labels = Record<string, string>

interface Family {
  name: string
  help: string
  type: 'counter' | 'gauge'
  values: Map<string, { labels: string; value: number }>
}

export class Metrics {
  readonly #families = new Map<string, Family>()
  /** Gauges computed when scraped (queue depth, projection lag, upstream health). */
  readonly #collectors: Array<() => void> = []

  counter(name: string, help: string): Counter {
    return new Counter(this.#family(name, help, 'counter'))
  }

  gauge(name: string, help: string): Gauge {
    return new Gauge(this.#family(name, help, 'gauge'))
  }

  /** Run `collect` before each scrape, to set gauges from live state. */
  onCollect(collect: () => void): void {
    this.#collectors.push(collect)
  }

  render(): string {
    for (const c of this.#collectors) c()
    const out: string[] = []
    for (const f of this.#families.values()) {
      out.push(`# HELP ${f.name} ${f.help}`, `# TYPE ${f.name} ${f.type}`)
      for (const v of f.values.values()) out.push(`${f.name}${v.labels} ${v.value}`)
    }
    return out.join('\n') + '\n'
  }

  #family(name: string, help: string, type: Family['type']): Family {
    let f = this.#families.get(name)
    if (!f) {
      f = { name, help, type, values: new Map() }
      this.#families.set(name, f)
    }
    return f
  }
}

function labelText(labels: Labels | undefined): string {
  if (!labels) return ''
  const parts = Object.entries(labels).map(([k, v]) => `${k}="${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`)
  return parts.length ? `{${parts.join(',')}}` : ''
}

export class Counter {
  constructor(private readonly family: Family) {}
  inc(labels?: Labels, by = 1): void {
    const key = labelText(labels)
    const v = this.family.values.get(key)
    if (v) v.value += by
    else this.family.values.set(key, { labels: key, value: by })
  }
}

export class Gauge {
  constructor(private readonly family: Family) {}
  set(value: number, labels?: Labels): void {
    const key = labelText(labels)
    const v = this.family.values.get(key)
    if (v) v.value = value
    else this.family.values.set(key, { labels: key, value })
  }
}
