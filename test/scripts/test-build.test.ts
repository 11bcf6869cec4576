import t from 'tap'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

// When the test build (dist-test/) counts as made from the sources as they are. A test moved to
// another folder keeps its modification time (git mv renames it) and the number of files stays
// the same: by those alone a build from before the move looked fresh, the moved test had no built
// file at its new path, and its old built file still ran. The paths' digest tells the two apart.

type BuildScript = { pathsDigest(files: string[]): string; sourceFiles(): string[] }
const script = (await import(new URL('../../scripts/build-for-tests.mjs', import.meta.url).href)) as BuildScript
const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const at = (...paths: string[]) => paths.map((p) => join(ROOT, p))

t.test('a file moved to another folder changes the digest; the order the files are found in does not', async (t) => {
  const before = script.pathsDigest(at('src/a.ts', 'test/gateway/dev-command.test.ts', 'test/helpers/x.ts'))
  t.equal(script.pathsDigest(at('test/helpers/x.ts', 'src/a.ts', 'test/gateway/dev-command.test.ts')), before, 'the same files found in another order')
  t.not(script.pathsDigest(at('src/a.ts', 'test/cli/dev.test.ts', 'test/helpers/x.ts')), before, 'one moved: as many files, another digest')
})

t.test("the digest is of the checkout's sources as found", async (t) => {
  const files = script.sourceFiles()
  t.ok(
    files.some((f) => f.endsWith(join('test', 'scripts', 'test-build.test.ts'))),
    'this test file is among the sources',
  )
  t.equal(script.pathsDigest(files), script.pathsDigest([...files].reverse()))
})
