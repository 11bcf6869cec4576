import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vite'

const here = fileURLToPath(new URL('.', import.meta.url))

/** The dashboard's build: plain TypeScript, no framework; `npm run build:dashboard` writes dist/dashboard/. */
export default defineConfig({
  root: here,
  base: '/',
  publicDir: false,
  build: {
    outDir: fileURLToPath(new URL('../../../dist/dashboard', import.meta.url)),
    emptyOutDir: true,
    assetsDir: 'assets',
    // The page's CSP allows no inline script or style: everything goes in files.
    assetsInlineLimit: 0,
    target: 'es2022',
  },
})
