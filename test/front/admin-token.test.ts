import t from 'tap'
import { adminToken, isLoopback } from '../../src/front/admin-server.js'
import { AdminTokenRequiredError } from '../../src/front/errors.js'

t.test('loopback addresses', async (t) => {
  for (const host of ['127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost', '::ffff:127.0.0.1']) t.ok(isLoopback(host), host)
  for (const host of ['0.0.0.0', '::', '10.0.0.5', '192.168.1.1', 'example.com', '128.0.0.1']) t.notOk(isLoopback(host), host)
})

t.test('the admin token: required beyond loopback, always used when set', async (t) => {
  t.equal(adminToken('127.0.0.1', {}), undefined, 'loopback: none needed')
  t.equal(adminToken('127.0.0.1', { TOLLGATE_ADMIN_TOKEN: 's3cret' }), 's3cret', 'set: required on loopback too')
  t.equal(adminToken('0.0.0.0', { TOLLGATE_ADMIN_TOKEN: 's3cret' }), 's3cret')
  t.throws(() => adminToken('0.0.0.0', {}), AdminTokenRequiredError)
  t.throws(
    () => adminToken('10.0.0.5', { TOLLGATE_ADMIN_TOKEN: '  ' }),
    { message: /admin\.listen\.host is "10\.0\.0\.5", which is not a loopback address.*Set TOLLGATE_ADMIN_TOKEN/ },
    'blank is unset',
  )
})
