// The JSON logger: one line per event at or above its level.

import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createLogger } from '../../dist/logging/logger.js'

test('the logger writes one JSON line per event at or above its level', () => {
  const lines = []
  const sink = { write: (line) => lines.push(line) }
  const logger = createLogger('info', sink).child({ component: 'test' })
  logger.debug('hidden')
  logger.info('block sealed', { number: 7n, txs: 2 })
  logger.error('failed', { err: new Error('boom') })
  assert.equal(lines.length, 2)
  for (const line of lines) assert.ok(line.endsWith('}\n') && !line.slice(0, -1).includes('\n'))
  const first = JSON.parse(lines[0])
  assert.equal(first.level, 'info')
  assert.equal(first.msg, 'block sealed')
  assert.equal(first.component, 'test')
  assert.equal(first.number, '7')
  assert.ok(!Number.isNaN(Date.parse(first.time)))
  assert.equal(JSON.parse(lines[1]).err.message, 'boom')
  const silent = []
  createLogger('silent', { write: (l) => silent.push(l) }).error('nothing')
  assert.equal(silent.length, 0)
  assert.throws(() => createLogger('loud'))
})
