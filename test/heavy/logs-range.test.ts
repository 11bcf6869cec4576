import t from 'tap'
import { chunkCount, logsBounds, needsHead, planLogs, tagsToResolve, tooManyMessage, tooWideMessage } from '../../src/get-logs/logs-range.js'

const limits = { chunkBlocks: 100, maxRangeBlocks: 1000, maxLogs: 50, concurrency: 4 }
const plan = (filter: object, resolved: Record<string, number> = {}) => planLogs(logsBounds(filter)!, new Map(Object.entries(resolved)), limits)

t.test('bounds: numbers, earliest, tags; blockHash and malformed filters are not planned', async (t) => {
  t.same(logsBounds({ fromBlock: '0x10', toBlock: 'latest' }), { from: { n: 16 }, to: { tag: 'latest' } })
  t.same(logsBounds({}), { from: { tag: 'latest' }, to: { tag: 'latest' } }, 'absent bounds mean latest')
  t.same(logsBounds({ fromBlock: 'earliest', toBlock: 'finalized' }), { from: { n: 0 }, to: { tag: 'finalized' } })
  t.equal(logsBounds({ blockHash: '0xab' }), undefined)
  t.equal(logsBounds({ fromBlock: 12 }), undefined, 'a number that is not hex: the node judges it')
  t.equal(logsBounds([]), undefined)
})

t.test('tags to resolve: none for latest..latest', async (t) => {
  t.same(tagsToResolve(logsBounds({})!), [])
  t.same(tagsToResolve(logsBounds({ fromBlock: 'latest', toBlock: 'pending' })!), [])
  t.same(tagsToResolve(logsBounds({ fromBlock: '0x0' })!), ['latest'])
  t.same(tagsToResolve(logsBounds({ fromBlock: 'safe', toBlock: 'latest' })!).sort(), ['latest', 'safe'])
})

t.test('plans', async (t) => {
  t.same(plan({ fromBlock: '0x0', toBlock: '0x63' }), { serve: 'as-is', from: 0 }, 'one chunk wide: as it is')
  t.same(plan({ fromBlock: '0x10', toBlock: '0x5' }), { serve: 'as-is', from: 16 }, 'from after to: the node says so')
  t.same(plan({ fromBlock: '0x0', toBlock: '0x3e8' }), { serve: 'too-wide', from: 0, to: 1000, suggestTo: 999 })
  const split = plan({ fromBlock: '0x0', toBlock: 'latest' }, { latest: 250 })
  t.same(
    split,
    {
      serve: 'split',
      from: 0,
      chunks: [
        [0, 99],
        [100, 199],
        [200, 250],
      ],
    },
    'tags resolved, the last chunk short',
  )
  t.same(
    plan({ fromBlock: '0x0', toBlock: '0xc7' }),
    {
      serve: 'split',
      from: 0,
      chunks: [
        [0, 99],
        [100, 199],
      ],
    },
    'exact chunks',
  )
})

t.test('a numeric top past the head is measured to the head, and asked as the head', async (t) => {
  t.same(plan({ fromBlock: '0x0', toBlock: '0xffffff' }, { latest: 29 }), { serve: 'split', from: 0, chunks: [[0, 29]] }, '30 blocks: one chunk, to the head')
  t.same(plan({ fromBlock: '0x0', toBlock: '0xffffff' }, { latest: 250 }), {
    serve: 'split',
    from: 0,
    chunks: [
      [0, 99],
      [100, 199],
      [200, 250],
    ],
  })
  t.same(plan({ fromBlock: '0x0', toBlock: '0xffffff' }, { latest: 5000 }), { serve: 'too-wide', from: 0, to: 5000, suggestTo: 999 }, 'too wide up to the head')
  t.same(plan({ fromBlock: '0x100', toBlock: '0xffffff' }, { latest: 29 }), { serve: 'as-is', from: 256 }, 'from past the head: the node says')
  t.same(plan({ fromBlock: '0x0', toBlock: '0xffffff' }), { serve: 'too-wide', from: 0, to: 0xffffff, suggestTo: 999 }, 'no head known: measured as written')
  t.equal(needsHead(logsBounds({ fromBlock: '0x0', toBlock: '0x63' })!, limits.chunkBlocks), false, 'a numeric range of one chunk: no lookup')
  t.equal(needsHead(logsBounds({ fromBlock: '0x0', toBlock: '0x64' })!, limits.chunkBlocks), true)
  t.equal(needsHead(logsBounds({ fromBlock: 'safe', toBlock: '0x10' })!, limits.chunkBlocks), true)
  t.equal(needsHead(logsBounds({ fromBlock: '0x0', toBlock: 'latest' })!, limits.chunkBlocks), false, 'a tag is resolved anyway')
  t.equal(chunkCount({ fromBlock: '0x0', toBlock: '0xffffff' }, 29, limits), 1, 'charged as the 30 blocks it reads')
  t.equal(chunkCount({ fromBlock: '0x0', toBlock: '0xffffff' }, 250, limits), 3)
})

t.test('messages name a range that works, in the phrasing indexers parse', async (t) => {
  t.match(tooWideMessage({ from: 16, to: 2000, suggestTo: 1015 }, 1000), /Try with this block range \[0x10, 0x3f7\]\.$/)
  t.match(tooManyMessage(16, 40, 50), /more than 50 logs\. Try with this block range \[0x10, 0x27\]\.$/)
  t.match(tooManyMessage(16, 16, 50), /block 0x10 alone holds more than that/)
})

t.test('chunk count: what a call is charged for, estimated against the head when it is admitted', async (t) => {
  t.equal(chunkCount({ fromBlock: '0x0', toBlock: '0x63' }, 5000, limits), 1, 'one chunk of 100')
  t.equal(chunkCount({ fromBlock: '0x0', toBlock: '0x64' }, 5000, limits), 2, '101 blocks: two chunks')
  t.equal(chunkCount({ fromBlock: '0x0', toBlock: '0x3e7' }, 5000, limits), 10, 'the widest range served: 10 chunks')
  t.equal(chunkCount({ fromBlock: '0x0', toBlock: '0x3e8' }, 5000, limits), 1, 'wider than served: refused without a chunk, one call')
  t.equal(chunkCount({ fromBlock: '0x1388', toBlock: 'latest' }, 5499, limits), 5, 'latest is the head')
  t.equal(chunkCount({ fromBlock: 'safe', toBlock: 'finalized' }, 5499, limits), 1, 'tags read as the head: at most what the split asks')
  t.equal(chunkCount({ fromBlock: '0x0', toBlock: 'latest' }, undefined, limits), 1, 'a head not known yet: one call')
  t.equal(chunkCount({ blockHash: '0xab' }, 5000, limits), 1, 'a block hash: one call')
  t.equal(chunkCount({ fromBlock: '0x10', toBlock: '0x1' }, 5000, limits), 1, 'from after to: the node says what is wrong')
  t.equal(chunkCount('junk', 5000, limits), 1)
})
