import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium, type Browser } from 'playwright-core'

/** Debian's chromium (`apt-get install chromium`; .ci/run installs it). */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

/** Screenshots and other things a person may want to look at after a run (gitignored). */
export const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/', import.meta.url))

export async function launchChromium(t: { teardown(fn: () => unknown): void }): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install -y chromium (or set CHROMIUM_PATH)`)
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  })
  t.teardown(() => browser.close())
  return browser
}

export function artifactPath(folder: string, name: string): string {
  const dir = join(ARTIFACTS, folder)
  mkdirSync(dir, { recursive: true })
  return join(dir, name)
}
