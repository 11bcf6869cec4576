import t from 'tap'
import { isHexQuantity } from '../../src/rpc/hex-quantity.js'

t.test('isHexQuantity matches what the regular expression it replaces matches', async (t) => {
  const samples = [
    '0x',
    '0x0',
    '0x1b4',
    '0X1',
    '0x1g',
    '0xABCDEF',
    '0xabcdef0123456789',
    '0xabcdef01234567890',
    'latest',
    'earliest',
    '',
    '0',
    'x1',
    '0x 1',
    '1x1',
    '0x1:',
    '0x@',
    '0x`',
    '0xG',
    '0x/',
  ]
  for (let digits = 1; digits <= 20; digits++) samples.push(`0x${'f'.repeat(digits)}`)
  for (const max of [13, 16]) {
    const re = new RegExp(`^0x[0-9a-fA-F]{1,${max}}$`)
    for (const s of samples) t.equal(isHexQuantity(s, max), re.test(s), `${JSON.stringify(s)} with at most ${max} digits`)
  }
})
