// Hex encoding for JSON output and decoding of trusted hex (src/util/hex.ts).

import assert from 'node:assert/strict'
import { test } from 'node:test'
import { bytesToHex, bytesToQuantity, hexToBytes, quantity, trustedHexToBytes } from '../../dist/util/hex.js'

test('quantity', () => {
  assert.equal(quantity(0), '0x0')
  assert.equal(quantity(0n), '0x0')
  assert.equal(quantity(255), '0xff')
  assert.equal(quantity(2n ** 256n - 1n), '0x' + 'f'.repeat(64))
  assert.throws(() => quantity(-1))
  assert.throws(() => quantity(1.5))
  assert.throws(() => quantity(-1n))
})

test('bytesToQuantity / bytesToHex / hexToBytes', () => {
  assert.equal(bytesToQuantity(new Uint8Array()), '0x0')
  assert.equal(bytesToQuantity(Uint8Array.from([0, 0])), '0x0')
  assert.equal(bytesToQuantity(Uint8Array.from([0, 0x0a, 0xbc])), '0xabc')
  assert.equal(bytesToQuantity(Uint8Array.from([0x1a, 0])), '0x1a00')
  assert.equal(bytesToHex(Uint8Array.from([0, 0xab])), '0x00ab')
  assert.equal(bytesToHex(new Uint8Array()), '0x')
  assert.deepEqual(hexToBytes('0x00Ab'), Uint8Array.from([0, 0xab]))
  assert.deepEqual(hexToBytes('0x'), new Uint8Array())
  assert.throws(() => hexToBytes('00ab'), /prefix/)
  assert.throws(() => hexToBytes('0xabc'), /odd/)
  assert.throws(() => hexToBytes('0xzz'), /invalid/)
})

test('trustedHexToBytes decodes with or without 0x', () => {
  assert.deepEqual([...trustedHexToBytes('0x00ab')], [0, 0xab])
  assert.deepEqual([...trustedHexToBytes('00ab')], [0, 0xab])
  assert.equal(trustedHexToBytes('0x').length, 0)
})
