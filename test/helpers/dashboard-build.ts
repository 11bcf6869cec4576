import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const SOURCES = join(ROOT, 'src', 'dashboard', 'web')
const BUILT = join(ROOT, 'dist', 'dashboard', 'index.html')

/**
 * Build the dashboard (vite) unless dist/dashboard is newer than every source file: the browser
 * test must look at the page as the sources say, not at a stale build.
 */
export function ensureDashboardBuilt(): string {
  const newest = Math.max(...readdirSync(SOURCES).map((f) => statSync(join(SOURCES, f)).mtimeMs))
  if (!existsSync(BUILT) || statSync(BUILT).mtimeMs < newest) {
    execFileSync(
      process.execPath,
      [join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js'), 'build', '--config', join(SOURCES, 'vite.config.ts'), '--logLevel', 'warn'],
      {
        cwd: ROOT,
        stdio: ['ignore', 'ignore', 'inherit'],
        timeout: 120_000,
      },
    )
  }
  return join(ROOT, 'dist', 'dashboard')
}
