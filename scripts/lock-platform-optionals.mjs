// The package registry reachable here serves only the linux builds of some platform packages
// (anvil's, msgpackr-extract's). `npm install` then leaves the other platforms' optional
// dependencies out of package-lock.json, and `npm ci` refuses the lock as out of sync. This
// adds each missing optional platform package as a lock entry with its os/cpu, so that npm ci
// accepts the lock and skips them on every platform they are not for. Run after `npm install`.
import { readFileSync, writeFileSync } from 'node:fs'

const PLATFORM = /-(darwin|linux|win32|freebsd)-(x64|amd64|arm64|arm|ia32)$/
const CPU = { x64: 'x64', amd64: 'x64', arm64: 'arm64', arm: 'arm', ia32: 'ia32' }
const lock = JSON.parse(readFileSync('package-lock.json', 'utf8'))
let added = 0
for (const [path, entry] of Object.entries(lock.packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const m = PLATFORM.exec(name)
    if (!m) continue
    const dir = path === '' ? '' : path.slice(0, path.lastIndexOf('node_modules/') + 'node_modules/'.length)
    const key = `${dir || 'node_modules/'}${name}`
    if (lock.packages[key] || lock.packages[`node_modules/${name}`]) continue
    lock.packages[`node_modules/${name}`] = {
      version: String(version).replace(/^[\^~]/, ''),
      cpu: [CPU[m[2]]],
      os: [m[1]],
      ...(entry.dev ? { dev: true } : {}),
      optional: true,
    }
    added++
  }
}
writeFileSync('package-lock.json', JSON.stringify(lock, null, 2) + '\n')
console.log(`lock: added ${added} platform optional entries`)
