// What the method implementations need from the rest of the node, and the block resolution they share.

import type { Common } from '@ethereumjs/common'
import type { ProducerClient } from '../../chain/producer-client.js'
import type { BlockRecord, ChainView } from '../../chain/view.js'
import type { IntakeContext } from '../../chain/tx-intake.js'
import type { KeelConfig } from '../../config/types.js'
import type { Executor } from '../../exec/pool.js'
import { bytesToHex } from '@ethereumjs/util'
import { RpcError, serverError } from '../../errors.js'
import type { BlockRef, BlockSelector } from '../params.js'
import type { FilterStore } from '../filters.js'
import type { RequestContext } from '../context.js'

export interface MethodDeps {
  config: KeelConfig
  common: Common
  view: ChainView
  producer: ProducerClient
  executor: Executor
  intake: IntakeContext
  filters: FilterStore
  keccak(data: Uint8Array): Uint8Array
  clientVersion: string
  /**
   * Whom the call pool runs a request's calls for (a client whose calls run long gets a lane of its
   * own, unless the pool exempts it): its address, or `key:NAME` for an allow-listed API key. Default: the address.
   */
  callClientOf?(ctx: RequestContext): string
}

/** Whom the call pool runs `ctx`'s calls for (MethodDeps.callClientOf; by default the client's address). */
export function callClientOf(deps: MethodDeps, ctx: RequestContext): string {
  return deps.callClientOf === undefined ? ctx.clientIp : deps.callClientOf(ctx)
}

/** Block number a tag or number names, or undefined when it is beyond the head. */
export function refToNumber(view: ChainView, ref: BlockRef): bigint | undefined {
  if (ref.kind === 'number') return ref.number <= view.head.number ? ref.number : undefined
  return ref.tag === 'earliest' ? 0n : view.head.number
}

/** The block an EIP-1898 parameter names, for methods that read state: geth's errors when absent. */
export async function resolveStateBlock(view: ChainView, selector: BlockSelector): Promise<BlockRecord> {
  const block = await findStateBlock(view, selector)
  if (!view.hasStateOf(block.number)) {
    throw serverError(`historical state ${bytesToHex(block.header.stateRoot)} is not available`)
  }
  return block
}

/** The block a selector names (its state may no longer be kept). */
export async function findStateBlock(view: ChainView, selector: BlockSelector): Promise<BlockRecord> {
  if (selector.kind === 'hash') {
    const block = await view.blockByHash(selector.hash)
    if (block === undefined) throw serverError(`header for hash not found`)
    return block
  }
  const number = refToNumber(view, selector)
  if (number === undefined) throw serverError('header not found')
  const block = number === view.head.number ? await view.headRecord() : await view.blockByNumber(number)
  if (block === undefined) throw serverError('header not found')
  return block
}

/** For the getters that answer null for an unknown block. */
export async function resolveBlockOrNull(view: ChainView, selector: BlockSelector): Promise<BlockRecord | undefined> {
  if (selector.kind === 'hash') return view.blockByHash(selector.hash)
  const number = refToNumber(view, selector)
  if (number === undefined) return undefined
  return number === view.head.number ? view.headRecord() : view.blockByNumber(number)
}

export function isRpcError(err: unknown): err is RpcError {
  return err instanceof RpcError
}
