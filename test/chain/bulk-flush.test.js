// The producer's bulk trie flush (archive mode) and the MPT's key-by-key path (--state-history, which
// pruning needs) reach the same state root after every block of the same transactions.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { bytesToHex, hexToBytes, privateToAddress } from '@ethereumjs/util'
import { Interface } from 'ethers'
import { decodeReceipts } from '../../dist/chain/receipts.js'
import { compile } from '../helpers/contracts.js'
import { benchKeys, deploy, openTempChain } from '../../bench/lib/temp-chain.js'

test('bulk flush and MPT flush agree on every state root (accounts created, storage written, zeroed)', async () => {
  const senders = benchKeys(30, 41)
  const { Token } = compile()
  const abi = new Interface(Token.abi)
  const transfer = (to, amount) => hexToBytes(abi.encodeFunctionData('transfer', [to, amount]))
  const fresh = (i) => `0x${(0xb0000 + i).toString(16).padStart(40, '0')}`
  const addressOf = (key) => bytesToHex(privateToAddress(key))
  const chains = [await openTempChain({ funded: senders }), await openTempChain({ funded: senders, stateHistory: 128 })]
  try {
    const roots = [[], []]
    for (let c = 0; c < 2; c++) {
      const chain = chains[c]
      const token = await deploy(chain, Token.bytecode)
      roots[c].push(chain.head.stateRoot)
      const blocks = [
        // native transfers to new accounts and tokens to every sender (new slots)
        () => senders.flatMap((key, i) => [
          chain.sign(key, { to: hexToBytes(fresh(i)), value: BigInt(i + 1), gasLimit: 21_000n }),
          chain.sign(chain.dev[0].key, { to: hexToBytes(token), data: transfer(addressOf(key), BigInt(1000 + i)) }),
        ]),
        // slots updated and created by the senders' own transfers
        () => senders.slice(1).map((key, i) => chain.sign(key, { to: hexToBytes(token), data: transfer(fresh(200 + i), 7n) })),
        // a holder's whole balance moved: its slot is deleted from the storage trie
        () => [chain.sign(senders[0], { to: hexToBytes(token), data: transfer(fresh(300), 1000n) })],
      ]
      for (const txs of blocks) {
        for (const raw of txs()) await chain.submit(raw)
        const event = await chain.sealBlock()
        assert.ok(event.txHashes.length > 0)
        assert.deepEqual(decodeReceipts(event.receiptsRlp).map((r) => r.status), event.txHashes.map(() => 1), 'every transaction succeeded')
        roots[c].push(chain.head.stateRoot)
      }
    }
    assert.deepEqual(roots[0].map((r) => Buffer.from(r).toString('hex')), roots[1].map((r) => Buffer.from(r).toString('hex')))
  } finally {
    for (const chain of chains) await chain.close()
  }
})
