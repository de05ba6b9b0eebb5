// patches/ (patch-package, applied at `npm ci`) changes @ethereumjs code for speed. These tests prove the
// patches are in place on a fresh install and that the patched helpers still answer what the originals did.

import assert from 'node:assert/strict'
import { readFileSync, readdirSync } from 'node:fs'
import { test } from 'node:test'
import { bigIntToBytes, bytesToHex, hexToBytes, setLengthLeft, setLengthRight } from '@ethereumjs/util'
import { PATCHED_FILES, unpatchedFiles } from '../../dist/evm/speedups.js'

test('every patched @ethereumjs file carries its patch after npm ci', () => {
  assert.deepEqual(unpatchedFiles(), [])
  const patches = readdirSync(new URL('../../patches/', import.meta.url))
  for (const { pkg } of PATCHED_FILES) {
    const name = pkg.replace('/', '+')
    const version = JSON.parse(readFileSync(new URL(`../../node_modules/${pkg}/package.json`, import.meta.url), 'utf8')).version
    assert.ok(patches.includes(`${name}+${version}.patch`), `a patch for the installed ${pkg}@${version}`)
  }
})

test('setLengthLeft / setLengthRight pad, keep and refuse as before', () => {
  const v = Uint8Array.from([1, 2, 3])
  assert.equal(bytesToHex(setLengthLeft(v, 5)), '0x0000010203')
  assert.equal(bytesToHex(setLengthRight(v, 5)), '0x0102030000')
  assert.equal(setLengthLeft(v, 3), v, 'an exact length is returned as is')
  assert.equal(bytesToHex(setLengthLeft(new Uint8Array(0), 2)), '0x0000')
  assert.throws(() => setLengthLeft(v, 2), /exceeds target length/)
  assert.equal(bytesToHex(setLengthLeft(v, 2, { allowTruncate: true })), '0x0203')
  assert.equal(bytesToHex(setLengthRight(v, 2, { allowTruncate: true })), '0x0102')
  const padded = setLengthLeft(v, 4)
  padded[3] = 9
  assert.equal(v[2], 3, 'the padded copy does not share memory with the input')
})

test('bigIntToBytes encodes as before', () => {
  const cases = [
    [0n, '0x00'],
    [1n, '0x01'],
    [255n, '0xff'],
    [256n, '0x0100'],
    [2n ** 255n + 7n, '0x8000000000000000000000000000000000000000000000000000000000000007'],
  ]
  for (const [n, hex] of cases) assert.equal(bytesToHex(bigIntToBytes(n)), hex)
  assert.equal(bytesToHex(bigIntToBytes(0x0102n, true)), '0x0201')
  assert.throws(() => bigIntToBytes(-1n))
})

test('RLP encode and decode agree with ethers on random nested values, and refuse truncated input', async () => {
  const { RLP } = await import('@ethereumjs/rlp')
  const { encodeRlp, decodeRlp, hexlify, getBytes } = await import('ethers')
  const { randomBytes } = await import('node:crypto')
  let seed = 7
  const rnd = (n) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n)
  const gen = (depth) => {
    if (depth > 3 || rnd(3) === 0) {
      const k = rnd(4)
      return Uint8Array.from(k === 0 ? randomBytes(1) : k === 1 ? [] : randomBytes(rnd(k === 2 ? 56 : 300)))
    }
    return Array.from({ length: rnd(20) }, () => gen(depth + 1))
  }
  const toEthers = (v) => (Array.isArray(v) ? v.map(toEthers) : hexlify(v))
  for (let i = 0; i < 2000; i++) {
    const value = gen(0)
    const encoded = RLP.encode(value)
    assert.equal(hexlify(encoded), encodeRlp(toEthers(value)))
    const input = Uint8Array.from(encoded)
    const decoded = RLP.decode(input)
    assert.deepEqual(toEthers(decoded), decodeRlp(encoded))
    const items = [decoded].flat(Infinity)
    for (const item of items) if (item.length > 0) assert.notEqual(item.buffer, input.buffer, 'decoded items do not alias the input')
    if (encoded.length > 1) assert.throws(() => RLP.decode(encoded.subarray(0, encoded.length - 1)), /invalid RLP|out-of-bounds/)
  }
  assert.deepEqual(getBytes(hexlify(RLP.encode(new Uint8Array(0)))), Uint8Array.from([0x80]))
})

test('RLP headers at the length boundaries, scalar inputs, stream decoding and trailing bytes', async () => {
  const { RLP } = await import('@ethereumjs/rlp')
  const { encodeRlp, decodeRlp, hexlify, toBeArray } = await import('ethers')
  // payloads of 55 / 56 bytes (one-byte vs two-byte header) and of 255 / 256 / 65,535 / 65,536 bytes;
  // lists of 56 and 256 one-byte items have payloads with two- and three-byte headers
  for (const n of [0, 1, 55, 56, 255, 256, 65535, 65536]) {
    const bytes = Uint8Array.from({ length: n }, (_, i) => (i * 7 + 200) & 255)
    assert.equal(hexlify(RLP.encode(bytes)), encodeRlp(hexlify(bytes)), `string of ${n}`)
    if (n > 256) continue
    const list = Array.from({ length: n }, (_, i) => Uint8Array.of(i & 127))
    const encodedList = RLP.encode(list)
    assert.equal(hexlify(encodedList), encodeRlp(list.map((b) => hexlify(b))), `list of ${n} items`)
    assert.equal(RLP.decode(encodedList).length, n)
  }
  // numbers and bigints encode as their minimal big-endian bytes, strings as UTF-8 (or 0x-hex)
  for (const v of [0, 1, 127, 128, 1024, 2 ** 40, 0n, 127n, 128n, 2n ** 200n]) {
    const expected = Number(v) === 0 ? '0x' : hexlify(toBeArray(v))
    assert.equal(hexlify(RLP.encode(v)), encodeRlp(expected), `scalar ${v}`)
    assert.equal(hexlify(RLP.encode([v, [v]])), encodeRlp([expected, [expected]]), `scalar ${v} in a list`)
  }
  assert.equal(hexlify(RLP.encode('dog')), encodeRlp(hexlify(new TextEncoder().encode('dog'))))
  assert.equal(hexlify(RLP.encode('0x0400')), encodeRlp('0x0400'))
  // stream mode returns what follows the first item; the plain decode refuses it
  const first = RLP.encode([Uint8Array.of(1, 2, 3), new Uint8Array(60)])
  const joined = Uint8Array.from([...first, 0xc0, 0x80])
  const { data, remainder } = RLP.decode(joined, true)
  assert.deepEqual(hexlify(RLP.encode(data)), hexlify(first))
  assert.equal(hexlify(remainder), '0xc080')
  assert.throws(() => RLP.decode(joined), /remainder must be zero/)
  // an item claiming more bytes than its enclosing list holds
  assert.throws(() => RLP.decode(Uint8Array.of(0xc2, 0x83, 1, 2)), /out-of-bounds/)
  assert.throws(() => RLP.decode(Uint8Array.of(0xb8, 0x05, 0x00)), /expected string length to be greater than 55/)
  assert.throws(() => RLP.decode(Uint8Array.of(0xf8, 0x38)), /total length is larger than the data/)
  assert.deepEqual(decodeRlp(hexlify(RLP.encode(RLP.decode(first)))), decodeRlp(hexlify(first)))
})

test('the logs bloom with its remembered bit positions sets the bits keccak gives, for repeated, new and many items', async () => {
  const { importEthereumjsModule } = await import('../../dist/evm/evm-internals.js')
  const { Bloom } = await importEthereumjsModule('@ethereumjs/vm', 'bloom/index.js')
  const { keccak_256 } = await import('@noble/hashes/sha3.js')
  // the yellow paper's M3:2048: the low 11 bits of each of the hash's first three byte pairs
  const expected = (items) => {
    const bits = new Uint8Array(256)
    for (const item of items) {
      const h = keccak_256(item)
      for (let i = 0; i < 3; i++) {
        const loc = ((h[2 * i] << 8) | h[2 * i + 1]) & 2047
        bits[255 - (loc >> 3)] |= 1 << (loc & 7)
      }
    }
    return bytesToHex(bits)
  }
  // distinct for every n (its three low bytes lead), the rest a pattern
  const item = (n, length) => {
    const bytes = Uint8Array.from({ length }, (_, k) => (n * 131 + k * 17) & 255)
    bytes.set([n >>> 16, (n >>> 8) & 255, n & 255])
    return bytes
  }
  // whether all three of e's bits are set in a bitvector given as hex, computed without the library
  const contains = (bitsHex, e) => {
    const bits = hexToBytes(bitsHex)
    const h = keccak_256(e)
    for (let i = 0; i < 3; i++) {
      const loc = ((h[2 * i] << 8) | h[2 * i + 1]) & 2047
      if ((bits[255 - (loc >> 3)] & (1 << (loc & 7))) === 0) return false
    }
    return true
  }
  // 10,000 distinct items: the memo is emptied twice over; every set is checked on its first and its
  // repeated use, and an address and a topic of the same leading bytes stay apart; check() answers for
  // an item never added as the bits say
  for (let n = 0; n < 5000; n++) {
    const items = [item(n, 20), item(n, 32), item(n % 7, 32), item(n + 1, 20).subarray(0, 20)]
    const absent = item(n + 100_000, 32)
    for (let round = 0; round < 2; round++) {
      const bloom = new Bloom()
      for (const e of items) bloom.add(e)
      const bits = expected(items)
      assert.equal(bytesToHex(bloom.bitvector), bits, `items of ${n}, round ${round}`)
      for (const e of items) assert.equal(bloom.check(e), true)
      assert.equal(bloom.check(absent), contains(bits, absent), `an absent item, ${n}`)
    }
  }
  const view = new Uint8Array(64)
  view.set(item(3, 32), 16)
  const bloom = new Bloom()
  bloom.add(view.subarray(16, 48))
  assert.equal(bytesToHex(bloom.bitvector), expected([item(3, 32)]), 'a view into a larger buffer')
})

test('EVM memory grows past its first buffer (1 KiB, 8 KiB, 12 KiB) and reads back what was written', async () => {
  const { createEVM } = await import('@ethereumjs/evm')
  const word = Uint8Array.from({ length: 32 }, (_, i) => i + 1)
  const hex = (n, bytes) => n.toString(16).padStart(bytes * 2, '0')
  const mstoreWordAt = (offset) => `7f${bytesToHex(word).slice(2)}61${hex(offset, 2)}52`
  // three words across the buffer's growth points, then MSIZE stored after them, then RETURN(0, 0x3040)
  const code = mstoreWordAt(1008) + mstoreWordAt(8176) + mstoreWordAt(12288) + `5961${hex(0x3020, 2)}52` + `61${hex(0x3040, 2)}6000f3`
  const evm = await createEVM()
  const sizes = []
  evm.events.on('step', (step) => sizes.push([step.opcode.name, step.memory.length, Number(step.memoryWordCount) * 32]))
  const result = await evm.runCode({ code: Uint8Array.from(Buffer.from(code, 'hex')), gasLimit: 1_000_000n })
  assert.equal(result.exceptionError, undefined)
  const expected = new Uint8Array(0x3040)
  for (const at of [1008, 8176, 12288]) expected.set(word, at)
  expected.set(setLengthLeft(bigIntToBytes(12320n), 32), 0x3020)
  assert.equal(bytesToHex(result.returnValue), bytesToHex(expected))
  // the step event's memory is cut as the original 8 KiB-step buffer cut it
  for (const [name, length, declared] of sizes) assert.equal(length, Math.min(declared, Math.max(8192, Math.ceil(declared / 8192) * 8192)), name)
  assert.deepEqual(sizes.at(-1), ['RETURN', 0x3040, 0x3040])
})

test('EVM memories carved from one slab start zeroed and never share a byte', async () => {
  const { importEvmModule } = await import('../../dist/evm/evm-internals.js')
  const { Memory } = await importEvmModule('memory.js')
  // more frames than one slab holds, each filling its first buffer with its own byte, as nested calls do
  const memories = Array.from({ length: 200 }, () => new Memory())
  const untouched = memories.map((m) => m.read(0, 1024))
  memories.forEach((m, i) => m.write(0, 1024, new Uint8Array(1024).fill((i % 255) + 1)))
  assert.ok(untouched.every((bytes) => bytes.every((b) => b === 0)), 'a new memory reads zero')
  memories.forEach((m, i) => assert.ok(m.read(0, 1024).every((b) => b === (i % 255) + 1), `memory ${i} holds its own bytes`))
  // growing past the first buffer keeps what was written and leaves the neighbours alone
  memories[63].write(1000, 64, new Uint8Array(64).fill(0xee))
  assert.ok(memories[63].read(0, 1000).every((b) => b === 64))
  assert.ok(memories[63].read(1000, 64).every((b) => b === 0xee))
  assert.ok(memories[64].read(0, 1024).every((b) => b === 65))
  assert.ok(new Memory().read(0, 1024).every((b) => b === 0))
})

test('an EVM memory released at its frame\'s end serves the next frame zeroed, unless a view of it is held', async () => {
  const { importEvmModule } = await import('../../dist/evm/evm-internals.js')
  const { Memory } = await importEvmModule('memory.js')
  const used = new Memory()
  used.write(100, 64, new Uint8Array(64).fill(7))
  used.keelRelease()
  assert.throws(() => used.read(0, 32), TypeError, 'a released memory is not read again')
  const next = new Memory()
  assert.ok(next.read(0, 1024).every((b) => b === 0), 'the buffer comes back zeroed')
  // a view handed out (call data, init code) must keep its bytes: that buffer is not reused
  const shared = new Memory()
  shared.write(0, 32, new Uint8Array(32).fill(9))
  const callData = shared.read(0, 32, true)
  shared.keelRelease()
  const after = new Memory()
  after.write(0, 32, new Uint8Array(32).fill(1))
  assert.ok(callData.every((b) => b === 9), 'a view outlives its frame unchanged')
  // MLOAD's and MCOPY's views are used at once and do not keep the buffer from being reused
  const loaded = new Memory()
  loaded.write(0, 32, new Uint8Array(32).fill(3))
  assert.ok(loaded.keelView(0, 32).every((b) => b === 3))
  const buffer = loaded._store
  loaded.keelRelease()
  assert.equal(new Memory()._store, buffer)
})

test('bytesToHex / bytesToUnprefixedHex answer as noble does, for every length, views and Buffers', async () => {
  const { bytesToUnprefixedHex } = await import('@ethereumjs/util')
  const noble = (b) => Buffer.from(b.buffer, b.byteOffset, b.length).toString('hex')
  for (let n = 0; n <= 3000; n += n < 80 ? 1 : 53) {
    const backing = Uint8Array.from({ length: n + 5 }, (_, i) => (i * 131 + n * 7) & 0xff)
    const view = backing.subarray(5)
    assert.equal(bytesToUnprefixedHex(view), noble(view), `length ${n}`)
    assert.equal(bytesToHex(view), `0x${noble(view)}`, `length ${n}, prefixed`)
    assert.equal(bytesToHex(Buffer.from(view)), `0x${noble(view)}`, `length ${n}, Buffer`)
  }
  assert.throws(() => bytesToHex('0x01'), /expected Uint8Array/)
  assert.throws(() => bytesToUnprefixedHex([1, 2, 3]), /expected Uint8Array/)
})

test('STOP and RETURN end the frame (by flag, not a thrown STOP): nothing after them runs, with and without step listeners', async () => {
  const { createEVM } = await import('@ethereumjs/evm')
  const { Common, Hardfork, Mainnet } = await import('@ethereumjs/common')
  const { Account, Address, hexToBytes } = await import('@ethereumjs/util')
  const code = (hex) => hexToBytes(`0x${hex}`)
  const callee = new Address(hexToBytes('0x00000000000000000000000000000000000c0de0'))
  const self = new Address(hexToBytes('0x00000000000000000000000000000000000c0de1'))
  // SSTORE(0, 1); STOP; SSTORE(0, 2)
  const stopMidway = '600160005500600260005500'
  // MSTORE(0, 0x2a); RETURN(0, 32); INVALID
  const returnThenInvalid = '602a60005260206000f3fe'
  // CALL(callee) with 32 bytes of output at 0; SSTORE(1, MLOAD(0)); RETURN(0, 32); SSTORE(1, 7)
  const caller = `6020600060006000600073${callee.toString().slice(2)}61fffff160005160015560206000f3600760015500`
  for (const listen of [false, true]) {
    const evm = await createEVM({ common: new Common({ chain: Mainnet, hardfork: Hardfork.Osaka }) })
    let steps = 0
    if (listen) evm.events.on('step', () => steps++)
    await evm.stateManager.putAccount(callee, new Account())
    await evm.stateManager.putCode(callee, code(returnThenInvalid))
    for (const [program, expectReturn, slot, value] of [
      [stopMidway, '0x', 0n, 1n],
      [returnThenInvalid, `0x${'2a'.padStart(64, '0')}`, undefined, undefined],
      [caller, `0x${'2a'.padStart(64, '0')}`, 1n, 0x2an],
    ]) {
      await evm.stateManager.putAccount(self, new Account())
      await evm.stateManager.putCode(self, code(program))
      const r = await evm.runCall({ to: self, gasLimit: 200_000n, skipBalance: true })
      assert.equal(r.execResult.exceptionError, undefined, program)
      assert.equal(bytesToHex(r.execResult.returnValue), expectReturn, program)
      if (slot !== undefined) {
        const stored = await evm.stateManager.getStorage(self, setLengthLeft(bigIntToBytes(slot), 32))
        assert.equal(BigInt(bytesToHex(stored)), value, `${program}: slot ${slot}`)
      }
    }
    if (listen) assert.ok(steps > 0)
  }
})

test('dynamic gas charged without a promise per step: the same gas, output, logs and storage as the original step path', async () => {
  const { createEVM } = await import('@ethereumjs/evm')
  const { Common, Hardfork, Mainnet } = await import('@ethereumjs/common')
  const { Account, Address, hexToBytes } = await import('@ethereumjs/util')
  const push = (n) => {
    const hex = n.toString(16).padStart(2, '0')
    const bytes = hex.length % 2 === 0 ? hex : `0${hex}`
    return (0x5f + bytes.length / 2).toString(16) + bytes
  }
  const ops = { EXP: '0a', KECCAK256: '20', ADDRESS: '30', BALANCE: '31', CALLDATACOPY: '37', CODECOPY: '39', EXTCODESIZE: '3b', RETURNDATACOPY: '3e', EXTCODEHASH: '3f', POP: '50', MLOAD: '51', MSTORE: '52', MSTORE8: '53', SLOAD: '54', SSTORE: '55', MCOPY: '5e', LOG2: 'a2', CALL: 'f1', RETURN: 'f3', STATICCALL: 'fa', REVERT: 'fd' }
  const asm = (...parts) => parts.map((x) => (typeof x === 'string' ? ops[x] : push(x))).join('')
  const callee = new Address(hexToBytes('0x00000000000000000000000000000000000c0de0'))
  const self = new Address(hexToBytes('0x00000000000000000000000000000000000c0de1'))
  const calleeN = BigInt(callee.toString())
  const everyKind = asm(
    3n, 0xffffn, 'EXP', 0n, 'MSTORE',
    0xabn, 100n, 'MSTORE8',
    64n, 0n, 'KECCAK256', 32n, 'MSTORE',
    16n, 0n, 200n, 'CALLDATACOPY',
    10n, 0n, 300n, 'CODECOPY',
    300n, 'MLOAD', 1n, 'SSTORE',
    1n, 'SLOAD', 2n, 'SSTORE',
    'ADDRESS', 'BALANCE', 3n, 'SSTORE',
    calleeN, 'EXTCODESIZE', 4n, 'SSTORE',
    calleeN, 'EXTCODEHASH', 5n, 'SSTORE',
    32n, 400n, 0n, 0n, 0n, calleeN, 0xffffn, 'CALL', 'POP',
    32n, 0n, 500n, 'RETURNDATACOPY',
    32n, 440n, 0n, 0n, calleeN, 0xffffn, 'STATICCALL', 'POP',
    32n, 400n, 600n, 'MCOPY',
    0xbeefn, 0xcafen, 64n, 0n, 'LOG2',
    640n, 0n, 'RETURN',
  )
  const programs = {
    everyKind,
    memoryOutOfGas: asm(1n, 0xffffffn, 'MSTORE'),
    expBigExponent: asm(2n ** 255n, 3n, 'EXP', 0n, 'MSTORE', 32n, 0n, 'RETURN'),
    revertWithData: asm(0x2an, 0n, 'MSTORE', 32n, 0n, 'REVERT'),
    keccakOverHugeMemory: asm(0xfffffffn, 0n, 'KECCAK256'),
  }
  const run = async (program, listen) => {
    const evm = await createEVM({ common: new Common({ chain: Mainnet, hardfork: Hardfork.Osaka }) })
    let steps = 0
    if (listen) evm.events.on('step', () => steps++)
    await evm.stateManager.putAccount(callee, new Account())
    await evm.stateManager.putCode(callee, hexToBytes('0x602a60005260206000f3'))
    await evm.stateManager.putAccount(self, new Account(0n, 12345n))
    await evm.stateManager.putCode(self, hexToBytes(`0x${program}`))
    const r = await evm.runCall({ to: self, gasLimit: 300_000n, data: hexToBytes('0x0102030405060708090a0b0c0d0e0f10'), skipBalance: true })
    const slots = []
    for (let i = 1n; i <= 5n; i++) slots.push(bytesToHex(await evm.stateManager.getStorage(self, setLengthLeft(bigIntToBytes(i), 32))))
    if (listen) assert.ok(steps > 0)
    return {
      gas: r.execResult.executionGasUsed,
      error: r.execResult.exceptionError?.error,
      returned: bytesToHex(r.execResult.returnValue),
      logs: (r.execResult.logs ?? []).map((log) => log.map((part) => (Array.isArray(part) ? part.map(bytesToHex) : bytesToHex(part)))),
      slots,
    }
  }
  for (const [name, program] of Object.entries(programs)) {
    const fast = await run(program, false)
    const original = await run(program, true)
    assert.deepEqual(fast, original, name)
    if (name === 'everyKind') {
      assert.equal(fast.error, undefined)
      assert.equal(fast.logs.length, 1)
      assert.equal(fast.returned.length, 2 + 640 * 2)
      assert.ok(fast.slots.every((v) => v !== '0x'), 'every slot written')
    } else if (name === 'expBigExponent') {
      assert.equal(fast.error, undefined)
      // PUSH32, PUSH1, EXP (10 + 50 a byte of exponent), PUSH1, MSTORE (3 + one word of memory), PUSH1, PUSH1, RETURN
      assert.equal(fast.gas, 3n + 3n + (10n + 50n * 32n) + 3n + (3n + 3n) + 3n + 3n)
    } else if (name === 'revertWithData') {
      assert.equal(fast.error, 'revert')
      assert.equal(fast.returned, `0x${'2a'.padStart(64, '0')}`)
    } else {
      assert.equal(fast.error, 'out of gas', name)
    }
  }
})

test('bytesToBigInt (words and addresses without a hex round trip) answers as parsing the hex does', async () => {
  const { bytesToBigInt } = await import('@ethereumjs/util')
  const { randomBytes } = await import('node:crypto')
  for (let k = 0; k < 4000; k++) {
    const n = k % 41
    const offset = k % 7
    const backing = randomBytes(n + offset + 3)
    if (k % 11 === 0) backing.fill(0xff)
    if (k % 13 === 0) backing.fill(0)
    const bytes = new Uint8Array(backing.buffer, backing.byteOffset + offset, n)
    const hex = Buffer.from(bytes).toString('hex')
    assert.equal(bytesToBigInt(bytes), BigInt(`0x${hex || '0'}`), `${n} bytes ${hex}`)
    assert.equal(bytesToBigInt(bytes, true), BigInt(`0x${Buffer.from(bytes).reverse().toString('hex') || '0'}`), `${n} bytes little-endian`)
  }
})

test('the journal: warm sets and levels made on first use keep EIP-2929 warmth and reverts as before', async () => {
  const { importEvmModule } = await import('../../dist/evm/evm-internals.js')
  const { Journal } = await importEvmModule('journal.js')
  const { Common, Mainnet } = await import('@ethereumjs/common')
  const { MerkleStateManager } = await import('@ethereumjs/statemanager')
  const { hexToBytes } = await import('@ethereumjs/util')
  const j = new Journal(new MerkleStateManager(), new Common({ chain: Mainnet, hardfork: 'prague' }))
  const addr = (b) => hexToBytes(`0x${b.repeat(20)}`)
  const slot = (b) => hexToBytes(`0x${b.repeat(32)}`)
  // always-warm addresses, 0x-prefixed or bare; one of them with a warm slot, the others with none
  j.addAlwaysWarmAddress(`0x${'aa'.repeat(20)}`)
  j.addAlwaysWarmAddress('bb'.repeat(20))
  j.addAlwaysWarmSlot(`0x${'cc'.repeat(20)}`, `0x${'01'.repeat(32)}`)
  for (const b of ['aa', 'bb', 'cc']) assert.equal(j.isWarmedAddress(addr(b)), true, b)
  assert.equal(j.isWarmedStorage(addr('cc'), slot('01')), true)
  assert.equal(j.isWarmedStorage(addr('aa'), slot('01')), false, "one address's warm slot is not another's")
  assert.equal(j.isWarmedStorage(addr('bb'), slot('01')), false)
  // a level that warms and touches, reverted: nothing of it stays; a level that records nothing, reverted
  await j.checkpoint()
  j.addWarmedStorage(addr('dd'), slot('02'))
  j.touchAccount('dd'.repeat(20))
  await j.checkpoint()
  await j.revert()
  assert.equal(j.isWarmedStorage(addr('dd'), slot('02')), true, 'an empty inner level reverts alone')
  await j.revert()
  assert.equal(j.isWarmedAddress(addr('dd')), false)
  assert.equal(j.isWarmedStorage(addr('dd'), slot('02')), false)
  assert.equal(j.touched.has('dd'.repeat(20)), false)
  // committed: stays warm, and a later revert of another level leaves it
  await j.checkpoint()
  j.addWarmedStorage(addr('ee'), slot('03'))
  await j.commit()
  await j.checkpoint()
  j.addWarmedAddress(addr('ff'))
  await j.revert()
  assert.equal(j.isWarmedStorage(addr('ee'), slot('03')), true)
  assert.equal(j.isWarmedAddress(addr('ff')), false)
  assert.equal(j.isWarmedStorage(addr('cc'), slot('01')), true, 'always-warm slots survive reverts')
})
