import { existsSync, readFileSync } from 'node:fs'

/**
 * This package's version (package.json), announced by each instance of a fleet. Found from
 * src/fleet/ when run from the sources and from dist/src/fleet/ when built.
 */
export const VERSION: string = (() => {
  for (const up of ['../../package.json', '../../../package.json']) {
    const url = new URL(up, import.meta.url)
    if (existsSync(url)) return (JSON.parse(readFileSync(url, 'utf8')) as { version: string }).version
  }
  return 'unknown'
})()
