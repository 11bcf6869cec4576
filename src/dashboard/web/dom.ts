/** A tiny element builder: text is always set as text (never parsed as HTML). */
type Child = Node | string | number | null | undefined | false
type Attrs = Record<string, string | number | boolean | null | undefined | ((e: Event) => void)>

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag)
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue
    if (typeof value === 'function') el.addEventListener(name.replace(/^on/, '').toLowerCase(), value)
    else if (value === true) el.setAttribute(name, '')
    else el.setAttribute(name, String(value))
  }
  append(el, children)
  return el
}

export function svg(tag: string, attrs: Record<string, string | number> = {}, ...children: Child[]): SVGElement {
  const el = document.createElementNS('http://www.w3.org/2000/svg', tag)
  for (const [name, value] of Object.entries(attrs)) el.setAttribute(name, String(value))
  append(el, children)
  return el
}

function append(el: Element, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue
    el.append(child instanceof Node ? child : String(child))
  }
}

/** Replace the content of a section's body. */
export function fill(sectionId: string, ...children: Child[]): void {
  const body = document.querySelector(`#${sectionId} .body`)
  if (!body) return
  body.replaceChildren()
  append(body, children)
}

export function date(ms: number): string {
  return new Date(ms).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })
}

/** A key shown without its middle: enough to recognise it, not to use it. */
export function masked(key: string): string {
  return `${key.slice(0, 6)}…${key.slice(-6)}`
}

/** A button that copies `text` and says so (for screen readers too). */
export function copyButton(text: string, label: string): HTMLButtonElement {
  const button = h('button', { type: 'button', class: 'secondary small', 'aria-label': label }, 'Copy')
  button.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(text)
      button.textContent = 'Copied'
    } catch {
      button.textContent = 'Copy failed: select and copy by hand'
    }
    setTimeout(() => (button.textContent = 'Copy'), 2000)
  })
  return button
}
