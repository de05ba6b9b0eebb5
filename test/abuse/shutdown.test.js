// SIGTERM under load: every answer a client got is complete, every transaction the node accepted
// survives the restart (pooled or mined), and the node exits 0.

import assert from 'node:assert/strict'
import http from 'node:http'
import { describe, it } from 'node:test'
import { Wallet } from 'ethers'
import { DEV_KEYS, startNode } from '../helpers/node.js'
import { rpcResult, waitForReceipt } from '../helpers/rpc.js'
import { call, request } from './http-client.js'

const SENDERS = 6
const READERS = 4
const REFUSED = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE'])

describe('graceful shutdown', () => {
  it('loses no accepted transaction and truncates no answer', async () => {
    let node = await startNode({ args: ['--metrics-port', '0', '--shutdown-grace-seconds', '3'], blockTime: 1 })
    const url = node.url
    try {
      const gasPrice = BigInt(await rpcResult(url, 'eth_gasPrice'))
      const wallets = DEV_KEYS.slice(0, SENDERS).map((key) => new Wallet(key))
      const accepted = []
      const stats = { answers: 0, refused: 0, truncated: [], nonJson: [] }
      let stopping = false

      const exchange = async (body, agent) => {
        try {
          const res = await request(url, { body, agent, timeoutMs: 15_000 })
          // A complete answer: JSON that parses (429/5xx would be bugs here, no limits are set).
          try {
            const json = JSON.parse(res.text)
            stats.answers++
            return json
          } catch {
            stats.nonJson.push(`${res.status} ${res.text.slice(0, 100)}`)
          }
        } catch (err) {
          if (err.truncated) stats.truncated.push(String(err))
          else if (REFUSED.has(err.code) || /socket hang up/.test(err.message)) stats.refused++
          else throw err
        }
        return undefined
      }

      const sender = async (wallet, index) => {
        const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
        let nonce = 0
        let refusedInARow = 0
        while (refusedInARow < 5) {
          const raw = await wallet.signTransaction({
            type: 2, chainId: 24589, nonce, to: wallet.address, value: 1n, gasLimit: 21_000n,
            maxFeePerGas: gasPrice * 4n + 1n, maxPriorityFeePerGas: 1n,
          })
          const answer = await exchange(call('eth_sendRawTransaction', [raw], nonce), agent)
          if (answer === undefined) {
            refusedInARow++
            await new Promise((r) => setTimeout(r, 50))
            continue
          }
          refusedInARow = 0
          if (typeof answer.result === 'string') {
            accepted.push({ hash: answer.result, from: index, nonce })
            nonce++
          } else if (!stopping) {
            assert.fail(`tx rejected before shutdown: ${JSON.stringify(answer.error)}`)
          }
        }
        agent.destroy()
      }
      const reader = async () => {
        const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
        let refusedInARow = 0
        while (refusedInARow < 5) {
          const answer = await exchange(call('eth_getBlockByNumber', ['latest', true]), agent)
          if (answer === undefined) {
            refusedInARow++
            await new Promise((r) => setTimeout(r, 50))
          } else refusedInARow = 0
        }
        agent.destroy()
      }

      const exited = new Promise((resolve) => node.proc.once('exit', (code) => resolve(code)))
      const load = [...wallets.map((w, i) => sender(w, i)), ...Array.from({ length: READERS }, reader)]
      await new Promise((r) => setTimeout(r, 2000))
      stopping = true
      node.proc.kill('SIGTERM')
      await Promise.all(load)
      assert.equal(await exited, 0, node.stderr())

      assert.deepEqual(stats.truncated, [], 'truncated answers')
      assert.deepEqual(stats.nonJson, [], 'answers that are not JSON')
      assert.ok(accepted.length >= SENDERS * 5, `only ${accepted.length} transactions accepted`)
      assert.ok(stats.answers > accepted.length)

      node = await node.restart()
      for (const { hash } of accepted) {
        const tx = await rpcResult(node.url, 'eth_getTransactionByHash', [hash])
        assert.notEqual(tx, null, `accepted transaction ${hash} is gone after the restart`)
      }
      // ...and they all get mined, in nonce order per sender.
      for (const { hash } of accepted) assert.equal((await waitForReceipt(node.url, hash, 30_000)).status, '0x1')
      for (let i = 0; i < SENDERS; i++) {
        const sent = accepted.filter((a) => a.from === i).length
        assert.equal(BigInt(await rpcResult(node.url, 'eth_getTransactionCount', [wallets[i].address, 'latest'])), BigInt(sent))
      }
    } finally {
      await node.stop()
    }
  })
})
