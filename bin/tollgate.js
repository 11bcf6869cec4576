#!/usr/bin/env node
// The compiled command line; `npm run build` (run by `npm start`) writes dist/.
import('../dist/src/cli/main.js')
  .then((m) => m.main(process.argv.slice(2)))
  .catch((err) => {
    if (err && err.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes('dist/src/cli')) {
      console.error('tollgate: not built yet. Run `npm run build` (or `npm start`) first.')
    } else {
      console.error(err)
    }
    process.exit(1)
  })
