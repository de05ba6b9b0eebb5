import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Interface } from 'ethers'
import { bytesToHex } from '@ethereumjs/util'
import { compile } from '../helpers/contracts.js'
import { transferCalldata, WARM_UP_TOKEN_CODE } from '../../dist/chain/warm-up-token.js'

test("the producer warm-up's token is the Token fixture as solc compiles it", () => {
  assert.equal(WARM_UP_TOKEN_CODE, compile().Token.deployedBytecode)
})

test('transferCalldata encodes transfer(address,uint256) as the ABI does', () => {
  const abi = new Interface(compile().Token.abi)
  const to = '0x000000000000000000000000000000005e000001'
  for (const amount of [1n, 0x100n, 10n ** 24n, 2n ** 256n - 1n]) {
    assert.equal(bytesToHex(transferCalldata(to, amount)), abi.encodeFunctionData('transfer', [to, amount]))
  }
})
