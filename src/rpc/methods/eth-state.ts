// Chain identity and account state: eth_chainId, eth_config, eth_blockNumber, eth_syncing, eth_accounts,
// eth_coinbase, eth_capabilities, eth_getBalance, eth_getTransactionCount, eth_getCode, eth_getStorageAt,
// eth_getStorageValues, eth_getProof.

import { getMerkleStateProof } from '@ethereumjs/statemanager'
import { Address, bytesToBigInt, setLengthLeft } from '@ethereumjs/util'
import { ethConfig } from '../../chain/fork-config.js'
import type { StateReader } from '../../exec/state-reader.js'
import { RawJson } from '../context.js'
import type { MethodHandler } from '../context.js'
import { clientLimitExceeded, invalidParams, serverError } from '../../errors.js'
import { bytesToHex, hexToBytes, quantity } from '../../util/hex.js'
import * as p from '../params.js'
import { resolveStateBlock } from './deps.js'
import type { MethodDeps } from './deps.js'

const MAX_PROOF_KEYS = 1024
/** geth's maxGetStorageSlots: keys across all addresses of one eth_getStorageValues call. */
const MAX_STORAGE_SLOTS = 1024

function toAddress(hex: string): Address {
  return new Address(hexToBytes(hex))
}

/** geth prints storage proof values as QUANTITY. */
function proofValue(hex: string): string {
  const digits = hex.slice(2).replace(/^0+/, '')
  return `0x${digits === '' ? '0' : digits}`
}

/**
 * A contract's code as its JSON answer, made once per code: the readers' shared code cache hands out one
 * array per code hash, so the answer lives as long as that entry (at most twice the cache's 8 MiB of code).
 * Hex-encoding and JSON-scanning the code on every eth_getCode was half the call: a 1.7 KiB token took
 * 34-35 µs of CPU a call against anvil's 22-28, and 19-22 µs with the answer kept.
 */
const codeAnswers = new WeakMap<Uint8Array, RawJson>()
function codeJson(code: Uint8Array): RawJson {
  let answer = codeAnswers.get(code)
  if (answer === undefined) {
    answer = new RawJson(JSON.stringify(bytesToHex(code)))
    codeAnswers.set(code, answer)
  }
  return answer
}

export function stateMethods(deps: MethodDeps, state: StateReader): Record<string, MethodHandler> {
  const view = deps.view
  const chainIdHex = quantity(deps.config.chainId)
  const smAt = async (selector: p.BlockSelector) => {
    const block = await resolveStateBlock(view, selector)
    return state.at(block.header.stateRoot)
  }
  const isLatest = (selector: p.BlockSelector) => selector.kind === 'tag' && selector.tag === 'latest'
  /** An account at 'latest' that the head's cache already holds: answered without a promise. */
  const latestAccount = (selector: p.BlockSelector, address: string) =>
    isLatest(selector) ? state.peekAccount(view.head.stateRoot, address) : undefined
  return {
    eth_chainId: (params) => {
      p.expectParams(params, 0, 0)
      return chainIdHex
    },
    /** EIP-7910: the forks in effect at the head, next and last, with their precompiles and system contracts. */
    eth_config: async (params) => {
      p.expectParams(params, 0, 0)
      const genesis = await view.blockByNumber(0n)
      if (genesis === undefined) throw serverError('genesis block not found')
      return ethConfig(deps.common, { hash: genesis.header.hash(), timestamp: genesis.header.timestamp }, view.head)
    },
    eth_blockNumber: (params) => {
      p.expectParams(params, 0, 0)
      return quantity(view.head.number)
    },
    eth_syncing: (params) => {
      p.expectParams(params, 0, 0)
      return false
    },
    eth_accounts: (params) => {
      p.expectParams(params, 0, 0)
      return []
    },
    /** The address the blocks this node seals pay their fees to (the genesis coinbase). */
    eth_coinbase: async (params) => {
      p.expectParams(params, 0, 0)
      return bytesToHex((await view.headRecord()).header.coinbase.bytes)
    },
    eth_capabilities: (params) => {
      p.expectParams(params, 0, 0)
      return capabilities(view.head, deps.config.stateHistory)
    },
    hardhat_getAutomine: (params) => {
      p.expectParams(params, 0, 0)
      return deps.config.blockTime === 0
    },
    eth_getBalance: (params) => {
      p.expectParams(params, 1, 2)
      const address = p.address(params[0], 0)
      const selector = p.blockSelector(params[1], 1, { optional: true })
      const known = latestAccount(selector, address)
      if (known !== undefined) return quantity(known?.balance ?? 0n)
      return smAt(selector).then(async (sm) => quantity((await sm.getAccount(toAddress(address)))?.balance ?? 0n))
    },
    eth_getTransactionCount: (params) => {
      p.expectParams(params, 1, 2)
      const address = p.address(params[0], 0)
      let selector = p.blockSelector(params[1], 1, { optional: true })
      if (selector.kind === 'tag' && selector.tag === 'pending') {
        if (deps.producer.mayHavePooled(address)) return deps.producer.pendingNonce(address).then(quantity)
        // nothing of this sender's in the pool: the pool's answer would be its account's nonce at the head
        selector = p.LATEST
      }
      const known = latestAccount(selector, address)
      if (known !== undefined) return quantity(known?.nonce ?? 0n)
      return smAt(selector).then(async (sm) => quantity((await sm.getAccount(toAddress(address)))?.nonce ?? 0n))
    },
    eth_getCode: async (params) => {
      p.expectParams(params, 1, 2)
      const address = p.address(params[0], 0)
      const sm = await smAt(p.blockSelector(params[1], 1, { optional: true }))
      return codeJson(await sm.getCode(toAddress(address)))
    },
    eth_getStorageAt: (params) => {
      p.expectParams(params, 2, 3)
      const address = p.address(params[0], 0)
      const slot = storageAtKey(params[1])
      const selector = p.blockSelector(params[2], 2, { optional: true })
      const known = isLatest(selector) ? state.peekStorage(view.head.stateRoot, address, slot) : undefined
      if (known !== undefined) return bytesToHex(setLengthLeft(known, 32))
      return smAt(selector).then(async (sm) => bytesToHex(setLengthLeft(await sm.getStorage(toAddress(address), slot), 32)))
    },
    eth_getStorageValues: async (params) => {
      p.expectParams(params, 1, 2)
      const requests = p.storageRequests(params[0], 0)
      let total = 0
      for (const r of requests) {
        total += r.slots.length
        if (total > MAX_STORAGE_SLOTS) throw clientLimitExceeded(`too many slots (max ${MAX_STORAGE_SLOTS})`)
      }
      if (total === 0) throw invalidParams('empty request')
      const sm = await smAt(p.blockSelector(params[1], 1, { optional: true }))
      const out: Record<string, string[]> = {}
      for (const { address, slots } of requests) {
        const account = toAddress(address)
        const values: string[] = new Array(slots.length)
        for (let k = 0; k < slots.length; k++) values[k] = bytesToHex(setLengthLeft(await sm.getStorage(account, slots[k]!), 32))
        out[address] = values
      }
      return out
    },
    eth_getProof: async (params) => {
      p.expectParams(params, 2, 3)
      const address = p.address(params[0], 0)
      if (!Array.isArray(params[1])) throw invalidParams('invalid argument 1: json: cannot unmarshal non-array into Go value of type []string')
      if (params[1].length > MAX_PROOF_KEYS) throw invalidParams(`too many storage keys (max ${MAX_PROOF_KEYS})`)
      const keys = params[1].map((k) => gethStorageKey(k, 1, ''))
      const sm = await smAt(p.blockSelector(params[2], 2, { optional: true }))
      const proof = await getMerkleStateProof(sm, toAddress(address), keys)
      return {
        address,
        accountProof: proof.accountProof,
        balance: proof.balance,
        codeHash: proof.codeHash,
        nonce: proof.nonce,
        storageHash: proof.storageHash,
        // an account that does not exist has no storage trie to prove against: geth still answers every
        // key asked for, with value 0 and an empty proof
        storageProof: (params[1] as (string | null)[]).map((given, i) => {
          // geth: a key given as 32 bytes comes back as given, a shorter one as a quantity
          const digits = given === null ? '' : given.replace(/^0[xX]/, '')
          const key = Math.ceil(digits.length / 2) === 32 ? bytesToHex(keys[i]) : quantity(bytesToBigInt(keys[i]))
          const sp = proof.storageProof[i]
          return sp === undefined ? { key, value: '0x0', proof: [] } : { key, value: proofValue(sp.value), proof: sp.proof }
        }),
      }
    },
  }
}

/**
 * A storage key as geth's eth_getStorageAt and eth_getProof take it (a string through decodeHash): hex with
 * or without 0x, an odd digit count padded, up to 32 bytes, left-padded; what it refuses is a plain error
 * (-32000) after `prefix` (execution-apis tests/eth_getStorageAt/get-storage-invalid-key*.io). JSON null
 * unmarshals into Go's empty string: slot 0.
 */
function gethStorageKey(v: unknown, i: number, prefix: string): Uint8Array {
  if (v !== null && typeof v !== 'string') throw invalidParams(`invalid argument ${i}: json: cannot unmarshal ${p.jsonKind(v)} into Go value of type string`)
  let digits = v === null ? '' : v.startsWith('0x') || v.startsWith('0X') ? v.slice(2) : v
  if (digits.length % 2 === 1) digits = `0${digits}`
  if (!/^[0-9a-fA-F]*$/.test(digits)) throw serverError(`${prefix}hex string invalid`)
  if (digits.length > 64) throw serverError(`${prefix}hex string too long, want at most 32 bytes`)
  return hexToBytes(`0x${digits.padStart(64, '0')}`)
}

/** eth_getStorageAt's key: geth's (1.16) own messages for a key that is not hex or longer than a slot. */
function storageAtKey(v: unknown): Uint8Array {
  if (typeof v === 'string') {
    const digits = v.startsWith('0x') || v.startsWith('0X') ? v.slice(2) : v
    if (!/^[0-9a-fA-F]*$/.test(digits)) throw invalidParams(`invalid hex in storage key: ${JSON.stringify(v)}`)
    if (digits.length > 64) throw invalidParams(`storage key too long (want at most 32 bytes): ${JSON.stringify(v)}`)
  }
  return gethStorageKey(v, 1, '')
}

/**
 * eth_capabilities (execution-apis EthCapabilities): what a router may send here. Blocks, transactions,
 * receipts and logs are never deleted; state (and so proofs) is kept for every block, or with
 * --state-history N for the blocks ChainView.hasStateOf serves: the head and the N before it.
 */
function capabilities(head: { number: bigint; hash: string }, stateHistory: number) {
  const everything = () => ({ disabled: false, oldestBlock: '0x0' })
  const state = () =>
    stateHistory === 0
      ? everything()
      : {
          disabled: false,
          oldestBlock: quantity(head.number > BigInt(stateHistory) ? head.number - BigInt(stateHistory) : 0n),
          deleteStrategy: { type: 'window', retentionBlocks: quantity(BigInt(stateHistory)) },
        }
  return {
    head: { number: quantity(head.number), hash: head.hash },
    state: state(),
    tx: everything(),
    logs: everything(),
    receipts: everything(),
    blocks: everything(),
    stateproofs: state(),
  }
}
