import t from 'tap'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'

const ROOT = join(import.meta.dirname, '..', '..')
const DOCS = readdirSync(join(ROOT, 'docs'))
  .filter((name) => name.endsWith('.md'))
  .map((name) => `docs/${name}`)
const PAGES = ['README.md', 'SECURITY.md', ...DOCS]

/** Fenced code blocks: they hold text that only looks like links and headings. */
const FENCED = /^(```|~~~)[\s\S]*?^\1$/gm

/** Markdown without its code: fenced blocks and inline code spans. */
function withoutCode(markdown: string): string {
  return markdown.replace(FENCED, '').replace(/`[^`\n]*`/g, '')
}

/** The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  for (const m of markdown.replace(FENCED, '').matchAll(/^#{1,6} +(.+?) *#* *$/gm)) {
    const slug = m[1]
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M} _-]/gu, '')
      .replace(/ /g, '-')
    const n = seen.get(slug) ?? 0
    seen.set(slug, n + 1)
    anchors.add(n === 0 ? slug : `${slug}-${n}`)
  }
  return anchors
}

/** The relative links of a page: `[text](target)` with no scheme. */
function relativeLinks(markdown: string): string[] {
  const targets = [...withoutCode(markdown).matchAll(/\]\(([^)\s]+)(?: "[^"]*")?\)/g)].map((m) => m[1])
  return targets.filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target))
}

t.test('every relative link of the README and docs/ points to a file, and to a heading of it', async (t) => {
  let links = 0
  for (const page of PAGES) {
    const text = readFileSync(join(ROOT, page), 'utf8')
    for (const link of relativeLinks(text)) {
      links++
      const [path, anchor] = link.split('#') as [string, string | undefined]
      const target = path === '' ? join(ROOT, page) : join(ROOT, dirname(page), decodeURIComponent(path))
      const shown = `${page}: (${link})`
      if (!t.ok(existsSync(target), `${shown}: ${relative(ROOT, target)} exists`)) continue
      if (anchor === undefined) continue
      const headings = statSync(target).isFile() ? anchorsOf(readFileSync(target, 'utf8')) : new Set<string>()
      t.ok(headings.has(anchor), `${shown}: #${anchor} is a heading of ${relative(ROOT, target)}`)
    }
  }
  t.ok(links > 30, `${links} links`)
})

t.test("anchors are GitHub's", async (t) => {
  const headings = ["# Limits (defaults; all in the config's `limits`)", '## TLS', '```', '# not a heading', '```', '## TLS']
  const page = [...headings, '### What survives'].join('\n')
  const anchors = anchorsOf(page)
  t.same([...anchors], ['limits-defaults-all-in-the-configs-limits', 'tls', 'tls-1', 'what-survives'])
})

t.test('the README and the index of docs/ link to every page of docs/', async (t) => {
  for (const index of ['README.md', 'docs/README.md']) {
    const links = relativeLinks(readFileSync(join(ROOT, index), 'utf8'))
    const linked = new Set(links.map((link) => relative(ROOT, join(ROOT, dirname(index), link.split('#')[0]))))
    for (const page of DOCS.filter((page) => page !== 'docs/README.md')) t.ok(linked.has(page), `${index} links ${page}`)
  }
})
