// Warming a fresh call worker: V8 optimises the interpreter, the state reads and the call path only
// after they have run a while; a fresh worker's first thousands of calls run slower than later ones.

import { createBlockHeaderFromRLP } from '@ethereumjs/block'
import type { Common } from '@ethereumjs/common'
import { hexToBytes } from '@ethereumjs/util'
import type { ChainLevel } from '../chain/store/level.js'
import { decodeHead, Keys } from '../chain/store/schema.js'
import { HISTORY_STORAGE } from '../chain/system-contracts.js'
import type { ExecEngine } from './engine.js'
import { execBlockOf } from './exec-block.js'
import { toWire } from './result-wire.js'
import type { CallTask, ExecBlock } from './types.js'

/**
 * The calls a worker runs while idle after it starts (~0.15-0.25 s of one core): a fresh engine's first
 * 3,000 unique token balanceOf calls took 338 ms, 230 ms after these (bench/micro/cold-calls.js; measured in
 * commit 46234a9, bench/README.md there).
 */
export const IDLE_WARM_UP_CALLS = 600

const LOOPER = '0x000000000000000000000000000000000000beef'
// a loop (SSTORE, SLOAD, KECCAK, JUMP) that runs out of gas: touches the interpreter, state and journal paths
const LOOP_CODE = hexToBytes('0x5b600160005401600055602060002050600056')

/**
 * The warm-up's token lives at the EIP-2935 contract's address when the chain has it: its code is
 * replaced for the call, its storage is not, so each balanceOf walks a real storage trie as a token's does.
 */
const TOKEN = HISTORY_STORAGE.address
/**
 * What a token's balanceOf(address) runs, as solc lays it out: the selector dispatch, the mapping slot
 * keccak(holder . 0), SLOAD, RETURN of one word; any other selector or short calldata reverts.
 */
const BALANCE_OF_CODE = hexToBytes(
  ('0x608060405260043610601c57600035' + // free memory pointer; calldatasize < 4: revert
    '60e01c806370a0823114602157' + // selector == balanceOf(address): jump to 0x21
    '5b600080fd' + // 0x1c: revert
    '5b50600435600052600060205260406000205460805260206080f3') as `0x${string}`, // 0x21: return sload(keccak(holder . 0))
)
const BALANCE_OF_SELECTOR = '70a08231'

/** The head block's call context, or undefined before the first block is stored. */
export async function headExecBlock(common: Common, level: ChainLevel): Promise<ExecBlock | undefined> {
  const head = await level.get(Keys.meta('head'))
  if (head === undefined) return undefined
  const headerRlp = await level.get(Keys.header(decodeHead(head).number))
  if (headerRlp === undefined) return undefined
  return execBlockOf(createBlockHeaderFromRLP(headerRlp, { common, setHardfork: true }))
}

/** One long call before the worker reports ready: a replaced worker must not time out its first call (~0.3 s of JIT). */
export async function warmUpOnce(engine: ExecEngine, block: ExecBlock): Promise<void> {
  await engine.run({ kind: 'call', block, args: { to: LOOPER, gas: 300_000n }, stateOverrides: { [LOOPER]: { code: LOOP_CODE } } })
}

/** A balanceOf(holder) in the warm-up's code at `token` (its storage as the chain has it; 20-byte 0x hex holder). */
export function balanceOfWarmUpCall(block: ExecBlock, holder: string, token = TOKEN): CallTask {
  return {
    kind: 'call',
    block,
    args: { to: token, data: hexToBytes(`0x${BALANCE_OF_SELECTOR}${holder.slice(2).padStart(64, '0')}`) },
    stateOverrides: { [token]: { code: BALANCE_OF_CODE } },
  }
}

/**
 * After the worker reports ready: up to `calls` warm-up balanceOf calls, each on a later turn of the event
 * loop and only once `idle()` resolves (no client's calls open), so a client's call waits behind at most
 * one (tens of µs once warm). `idle()` resolving false ends the warm-up: clients' calls have warmed the
 * worker (and `block` may be long gone from a pruned state). Resolves with the number run.
 */
export async function warmUpWhileIdle(engine: Pick<ExecEngine, 'run'>, block: ExecBlock, idle: () => Promise<boolean>, calls = IDLE_WARM_UP_CALLS): Promise<number> {
  for (let i = 0; i < calls; i++) {
    await new Promise(setImmediate)
    if (!(await idle())) return i
    // encoded as runBatch encodes a client's result, and dropped: that path warms up too
    toWire(await engine.run(balanceOfWarmUpCall(block, `0x${(0xbee00000 + i).toString(16).padStart(40, '0')}`)))
  }
  return calls
}
