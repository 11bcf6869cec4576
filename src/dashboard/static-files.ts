import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, extname, join, relative, sep } from 'node:path'
import { constants, gzipSync } from 'node:zlib'
import { fileURLToPath } from 'node:url'
import type { HttpRequest, HttpResponse, TemplatedApp } from '../front/uws.js'
import { GZIP_MIN_BYTES, sendReply } from '../front/respond.js'
import type { Exchanges, ResponseState } from '../front/exchanges.js'
import { getAndHead, otherMethods } from '../front/route-methods.js'

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
  '.webmanifest': 'application/manifest+json',
}

/**
 * The page may run only our own scripts and talk only to us; a browser wallet's injected
 * provider is the extension's, not the page's, so it is not affected.
 */
const PAGE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
})

/**
 * The built dashboard (`npm run build:dashboard` writes dist/dashboard/), found by walking up
 * from this module so that it resolves from src/ (tsx, tests) and from dist/src/ (compiled).
 */
export function dashboardDir(): string | undefined {
  let dir = dirname(fileURLToPath(import.meta.url))
  for (;;) {
    const candidate = join(dir, 'dist', 'dashboard')
    if (existsSync(join(candidate, 'index.html'))) return candidate
    const parent = dirname(dir)
    if (parent === dir) return undefined
    dir = parent
  }
}

/**
 * Serve the dashboard's static files from memory: `/` is index.html (never cached: it names the
 * current hashed assets), `/assets/*` are content-hashed and cached for a year. Every file gets a
 * static route of its own, which uWS matches before the catch-all 404. Without a build, `/` says
 * how to make one.
 */
export function registerStaticFiles(app: TemplatedApp, exchanges: Exchanges, dir: string | undefined): number {
  if (dir === undefined) {
    getAndHead(app, exchanges, '/', (res, _req, state) => {
      const html =
        '<!doctype html><title>Tollgate</title><p>The dashboard is not built: run <code>npm run build</code> (or <code>npm run build:dashboard</code>) and restart.</p>'
      sendReply(res, state, { status: 503, body: html, contentType: TYPES['.html'], headers: PAGE_HEADERS }, false)
    })
    otherMethods(app, exchanges, '/', ['GET', 'HEAD'])
    return 0
  }
  const files = walk(dir)
  for (const path of files) {
    const body = readFileSync(path)
    const rel = relative(dir, path).split(sep).join('/')
    const type = TYPES[extname(path)] ?? 'application/octet-stream'
    const immutable = rel.startsWith('assets/')
    const headers = {
      ...(type.startsWith('text/html') ? PAGE_HEADERS : { 'X-Content-Type-Options': 'nosniff' }),
      'Cache-Control': immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
      Vary: 'Accept-Encoding',
    }
    // Compressed once, here, and kept: the files never change while we run, and compressing
    // them again for every request spent CPU on the same bytes (a 300 KB script each time).
    const zipped = gzipOnce(body)
    const zippedHeaders = { ...headers, 'Content-Encoding': 'gzip' }
    const serve = (res: HttpResponse, req: HttpRequest, state: ResponseState): void => {
      const gzip = zipped !== undefined && req.getHeader('accept-encoding').includes('gzip')
      sendReply(res, state, { status: 200, body: gzip ? zipped : body, contentType: type, headers: gzip ? zippedHeaders : headers }, false)
    }
    const routes = rel === 'index.html' ? ['/', '/index.html'] : [`/${rel}`]
    for (const route of routes) {
      getAndHead(app, exchanges, route, serve)
      otherMethods(app, exchanges, route, ['GET', 'HEAD'])
    }
  }
  return files.length
}

/** The gzip of a file worth compressing (GZIP_MIN_BYTES or more, and smaller once compressed), else undefined. */
function gzipOnce(body: Buffer): Buffer | undefined {
  if (body.byteLength < GZIP_MIN_BYTES) return undefined
  const zipped = gzipSync(body, { level: constants.Z_BEST_COMPRESSION })
  return zipped.byteLength < body.byteLength ? zipped : undefined
}

function walk(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) walk(path, out)
    else out.push(path)
  }
  return out
}
