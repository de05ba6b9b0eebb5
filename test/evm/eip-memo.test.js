// The memoised Common.isActivatedEIP answers what the original array scan answers, also after the
// hardfork or the EIP set changes.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Common, Hardfork, Mainnet } from '@ethereumjs/common'

test('isActivatedEIP follows hardfork changes and extra EIPs like the original', async () => {
  const original = Common.prototype.isActivatedEIP
  const { memoizeEipLookups } = await import('../../dist/evm/eip-memo.js')
  memoizeEipLookups()
  const scan = (common, eip) => original.call(common, eip)
  const common = new Common({ chain: Mainnet, hardfork: Hardfork.London })
  const probes = [0, 1, 155, 1559, 2929, 3855, 4844, 6780, 7702, 7951, 99999]
  const check = (label) => {
    for (const eip of probes) assert.equal(common.isActivatedEIP(eip), scan(common, eip), `${label}: EIP-${eip}`)
  }
  check('london')
  assert.equal(common.isActivatedEIP(3855), false)
  common.setHardfork(Hardfork.Shanghai)
  check('shanghai')
  assert.equal(common.isActivatedEIP(3855), true)
  common.setHardfork(Hardfork.Osaka)
  check('osaka')
  assert.equal(common.isActivatedEIP(7951), true)
  const copy = common.copy()
  copy.setHardfork(Hardfork.London)
  check('the original after a copy moved on')
  assert.equal(copy.isActivatedEIP(7702), false)
  assert.equal(common.isActivatedEIP(7702), true)
})
