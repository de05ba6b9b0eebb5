// The next block's gas limit under --block-gas-limit: geth's core.CalcGasLimit, whose test cases
// (core/block_validator_test.go) these are, so that geth, the replicas and `keel import` accept each step.

import assert from 'node:assert/strict'
import { test } from 'node:test'
import { nextGasLimit } from '../../dist/chain/gas-limit.js'

test("moves toward the target by parent / 1024 - 1 a block at most, as geth's CalcGasLimit", () => {
  for (const [parent, max, min] of [[20_000_000n, 20_019_530n, 19_980_470n], [40_000_000n, 40_039_061n, 39_960_939n]]) {
    assert.equal(nextGasLimit(parent, 2n * parent), max, 'increase')
    assert.equal(nextGasLimit(parent, 5000n), min, 'decrease')
    assert.equal(nextGasLimit(parent, parent - 1n), parent - 1n, 'small decrease')
    assert.equal(nextGasLimit(parent, parent + 1n), parent + 1n, 'small increase')
    assert.equal(nextGasLimit(parent, parent), parent, 'no change')
  }
})

test('a target of 0 keeps the parent\'s limit; one under 5,000 counts as 5,000', () => {
  assert.equal(nextGasLimit(60_000_000n, 0n), 60_000_000n)
  assert.equal(nextGasLimit(6000n, 1n), 5996n)
  assert.equal(nextGasLimit(5002n, 1n), 5000n)
  assert.equal(nextGasLimit(5000n, 1n), 5000n)
})
