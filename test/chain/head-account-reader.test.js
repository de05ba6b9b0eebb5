// The pool's view of nonces and balances: the committed head, read through the trie reader.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Address, bytesToHex, hexToBytes, privateToAddress } from '@ethereumjs/util'
import { benchKeys, openTempChain } from '../../bench/lib/temp-chain.js'

test('nonces and balances at each new head match the state the block left, for old, new and unknown accounts', async () => {
  const senders = benchKeys(8, 51)
  const recipient = (i) => `0x${(0xd1000 + i).toString(16).padStart(40, '0')}`
  const chain = await openTempChain({ funded: senders })
  try {
    const reader = chain.producer.reader
    const sm = chain.producer.sm
    const addresses = [...senders.map((key) => bytesToHex(privateToAddress(key))), recipient(0), recipient(7), recipient(99)]
    const before = await Promise.all(addresses.map((a) => reader.getBalance(a)))
    for (let b = 1; b <= 3; b++) {
      for (let i = 0; i < senders.length; i++) {
        await chain.submit(chain.sign(senders[i], { to: hexToBytes(recipient(i)), value: 10n ** 15n, gasLimit: 21_000n }))
      }
      assert.equal((await chain.sealBlock()).txHashes.length, senders.length)
      for (const a of addresses) {
        const account = await sm.getAccount(new Address(hexToBytes(a)))
        assert.equal(await reader.getNonce(a), account?.nonce ?? 0n, `nonce of ${a} after block ${b}`)
        assert.equal(await reader.getBalance(a), account?.balance ?? 0n, `balance of ${a} after block ${b}`)
      }
      assert.equal(await reader.getNonce(addresses[0]), BigInt(b))
      assert.equal(await reader.getBalance(recipient(0)), BigInt(b) * 10n ** 15n)
    }
    assert.ok((await reader.getBalance(addresses[0])) < before[0])
    assert.equal(await reader.getBalance(recipient(99)), 0n)
    assert.equal(await reader.getNonce(recipient(99)), 0n)
  } finally {
    await chain.close()
  }
})
