// Loaded before each test file tap starts (.taprc `node-arg`). The suite runs built JavaScript
// (scripts/test.mjs); a test named by its .ts path (`npx tap test/ws/limits.test.ts`) runs through
// tsx instead, which is registered here for that file only: the built files pay nothing for it.
if (process.argv[1]?.endsWith('.ts')) await import('tsx')
