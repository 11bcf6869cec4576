import t from 'tap'
import { originAllowed } from '../../src/keys/domain-allowlist.js'
import { normalizeDomains } from '../../src/accounts/key-settings.js'
import { BadDomainsError } from '../../src/accounts/errors.js'

t.test('an allowlist is normalised: lower case, no scheme or path, no duplicates', async (t) => {
  t.same(normalizeDomains([' https://App.Example.com/x ', 'app.example.com', '*.Example.org', 'localhost:3000', '']), [
    'app.example.com',
    '*.example.org',
    'localhost:3000',
  ])
  for (const bad of [['exa mple.com'], ['*.'], ['a..b'], [42], 'example.com', Array.from({ length: 21 }, (_, i) => `d${i}.com`)]) {
    t.throws(() => normalizeDomains(bad), BadDomainsError, JSON.stringify(bad))
  }
})

t.test('Origin, else Referer, must match an entry', async (t) => {
  const list = ['app.example.com', '*.example.org', 'localhost:3000']
  t.ok(originAllowed(undefined, '', ''), 'no allowlist: anything')
  t.ok(originAllowed([], 'https://evil.com', ''), 'empty allowlist: anything')
  t.ok(originAllowed(list, 'https://app.example.com', ''))
  t.ok(originAllowed(list, 'https://app.example.com:8443', ''), 'an entry without a port matches any port')
  t.notOk(originAllowed(list, 'https://example.com', ''), 'the parent is not the host')
  t.notOk(originAllowed(list, 'https://app.example.com.evil.com', ''))
  t.ok(originAllowed(list, 'https://a.b.example.org', ''), 'wildcard: any subdomain')
  t.notOk(originAllowed(list, 'https://example.org', ''), 'wildcard: not the bare domain')
  t.notOk(originAllowed(list, 'https://evilexample.org', ''))
  t.ok(originAllowed(list, 'http://localhost:3000', ''))
  t.notOk(originAllowed(list, 'http://localhost:3001', ''), 'an entry with a port matches that port only')
  t.ok(originAllowed(list, '', 'https://app.example.com/page?x=1'), 'Referer when no Origin')
  t.ok(originAllowed(list, 'null', 'https://app.example.com/'), 'an opaque origin falls back to Referer')
  t.notOk(originAllowed(list, '', ''), 'neither header: refused')
  t.notOk(originAllowed(list, 'not a url', ''))
})
