// eth_getLogs and the polling filters (eth_newFilter, eth_newBlockFilter,
// eth_newPendingTransactionFilter, eth_getFilterChanges, eth_getFilterLogs, eth_uninstallFilter).

import { LogMatcher, candidateBlocks } from '../../chain/logs.js'
import type { LogCriteria } from '../../chain/logs.js'
import type { MethodHandler } from '../context.js'
import { RawJson } from '../context.js'
import { invalidParams, serverError } from '../../errors.js'
import type { FilterChanges } from '../filters.js'
import { quantity } from '../../util/hex.js'
import * as p from '../params.js'
import { encodedLogs } from './chain-json.js'
import { LogTextMatcher } from '../log-text-matcher.js'
import { LogsAnswerBuilder } from '../logs-answer.js'
import { LogsAnswerCache } from '../logs-cache.js'
import type { MethodDeps } from './deps.js'

function resolveBound(ref: p.BlockRef | undefined, head: bigint): bigint {
  if (ref === undefined) return head
  if (ref.kind === 'number') return ref.number
  return ref.tag === 'earliest' ? 0n : head
}

export function logMethods(deps: MethodDeps): Record<string, MethodHandler> {
  const { view, config, filters } = deps
  const maxRange = BigInt(config.logsMaxBlockRange)
  const answers = new LogsAnswerCache()
  const running = new Map<string, Promise<RawJson>>()

  async function logsInRange(criteria: LogCriteria, from: bigint, to: bigint): Promise<RawJson> {
    if (to - from + 1n > maxRange) {
      const retryTo = from + maxRange - 1n
      throw invalidParams(`query exceeds max block range ${maxRange}, retry with the range ${from}-${retryTo}`, {
        fromBlock: quantity(from),
        toBlock: quantity(retryTo),
        limit: Number(maxRange),
      })
    }
    const stem = LogsAnswerCache.stem(criteria, from)
    const key = LogsAnswerCache.key(stem, to)
    const cached = answers.get(key)
    if (cached !== undefined) return cached.answer
    // identical queries that arrive while the first runs (a new head, many pollers) share its work
    let pending = running.get(key)
    if (pending === undefined) {
      pending = answerRange(criteria, stem, from, to)
      running.set(key, pending)
      const done = () => running.delete(key)
      pending.then(done, done)
    }
    return pending
  }

  async function answerRange(criteria: LogCriteria, stem: string, from: bigint, to: bigint): Promise<RawJson> {
    const prefix = answers.prefixOf(stem, to)
    const start = prefix === undefined ? from : prefix.to + 1n
    const before = prefix?.count ?? 0
    const limit = config.logsMaxResults - before
    const matcher = new LogMatcher(criteria, deps.keccak)
    const textMatcher = new LogTextMatcher(criteria)
    const found = new LogsAnswerBuilder()
    for (const number of await candidateBlocks(view, matcher, start, to)) {
      const block = view.cachedBlock(number) ?? (await view.blockByNumber(number))
      if (block === undefined) continue
      textMatcher.collect(encodedLogs(block), found)
      if (found.count > limit) {
        const retryTo = number > from ? number - 1n : from
        throw invalidParams(`query exceeds max results ${config.logsMaxResults}, retry with the range ${from}-${retryTo}`, {
          fromBlock: quantity(from),
          toBlock: quantity(retryTo),
          limit: config.logsMaxResults,
        })
      }
    }
    const earlier = prefix?.answer
    // (a stored answer is bytes, as built here)
    const answer = earlier === undefined ? new RawJson(found.toJson()) : found.count === 0 ? earlier : new RawJson(found.toJson(earlier.jsonBytes ?? Buffer.from(earlier.json, 'latin1')))
    answers.set(stem, { answer, count: before + found.count, to }, prefix)
    return answer
  }

  function checkNotPending(filter: p.LogFilter): void {
    if (filter.fromBlock?.kind === 'tag' && filter.fromBlock.tag === 'pending') throw invalidParams('pending logs are not supported')
    if (filter.toBlock?.kind === 'tag' && filter.toBlock.tag === 'pending') throw invalidParams('pending logs are not supported')
  }

  async function getLogs(filter: p.LogFilter): Promise<RawJson> {
    const criteria: LogCriteria = { addresses: filter.addresses, topics: filter.topics }
    if (filter.blockHash !== undefined) {
      const block = await view.blockByHash(filter.blockHash)
      if (block === undefined) throw serverError('unknown block')
      return logsInRange(criteria, block.number, block.number)
    }
    checkNotPending(filter)
    const head = view.head.number
    const from = resolveBound(filter.fromBlock, head)
    const to = resolveBound(filter.toBlock, head)
    if (from > to) throw invalidParams('invalid block range params')
    // geth refuses a range past the head, either end (execution-apis tests/eth_getLogs/filter-error-future-block-range)
    if (to > head) throw invalidParams('block range extends beyond current head block')
    return logsInRange(criteria, from, to)
  }

  const notFound = () => serverError('filter not found')

  return {
    eth_getLogs: async (params) => {
      p.expectParams(params, 1, 1)
      return getLogs(p.logFilter(params[0], 0))
    },
    eth_newFilter: async (params) => {
      p.expectParams(params, 1, 1)
      const filter = p.logFilter(params[0], 0)
      if (filter.blockHash !== undefined) throw invalidParams('invalid argument 0: cannot specify blockHash in a filter')
      checkNotPending(filter)
      const fromNumber = filter.fromBlock?.kind === 'number' ? filter.fromBlock.number : undefined
      const toNumber = filter.toBlock?.kind === 'number' ? filter.toBlock.number : undefined
      // geth's event system: a reversed numeric range can never match
      if (fromNumber !== undefined && toNumber !== undefined && fromNumber > toNumber) throw serverError('invalid from and to block combination: from > to')
      return filters.install(
        { type: 'logs', criteria: { addresses: filter.addresses, topics: filter.topics }, fromBlock: filter.fromBlock, toBlock: filter.toBlock },
        view.head.number,
      )
    },
    eth_newBlockFilter: (params) => {
      p.expectParams(params, 0, 0)
      return filters.install({ type: 'blocks' }, view.head.number)
    },
    eth_newPendingTransactionFilter: (params) => {
      p.expectParams(params, 0, 1)
      return filters.install({ type: 'pendingTransactions' }, view.head.number)
    },
    eth_uninstallFilter: (params) => {
      p.expectParams(params, 1, 1)
      return filters.uninstall(filterId(params[0]))
    },
    eth_getFilterChanges: async (params) => {
      p.expectParams(params, 1, 1)
      const id = filterId(params[0])
      // the head before the poll: the cursor never passes a block this node cannot read yet
      const polled = await filters.poll(id, view.head.number)
      if (polled === undefined) throw notFound()
      return changes(polled)
    },
    eth_getFilterLogs: async (params) => {
      p.expectParams(params, 1, 1)
      const spec = await filters.spec(filterId(params[0]))
      if (spec === undefined || spec.type !== 'logs') throw notFound()
      return getLogs({ addresses: spec.criteria.addresses, topics: spec.criteria.topics, fromBlock: spec.fromBlock, toBlock: spec.toBlock })
    },
  }

  async function changes(polled: FilterChanges): Promise<unknown[] | RawJson> {
    switch (polled.type) {
      case 'pendingTransactions':
        return polled.hashes
      case 'blocks': {
        const out: string[] = []
        for (let n = polled.after + 1n; n <= polled.upTo; n++) {
          const block = await view.blockByNumber(n)
          if (block !== undefined) out.push(block.hash)
        }
        return out
      }
      case 'logs': {
        const { spec, after, upTo } = polled
        if (upTo <= after) return EMPTY
        let from = after + 1n
        const lower = spec.fromBlock?.kind === 'number' ? spec.fromBlock.number : undefined
        const upper = spec.toBlock?.kind === 'number' ? spec.toBlock.number : upTo
        if (lower !== undefined && lower > from) from = lower
        const to = upper < upTo ? upper : upTo
        if (from > to) return EMPTY
        return logsInRange(spec.criteria, from, to)
      }
    }
  }
}

const EMPTY = new RawJson('[]')

function filterId(v: unknown): string {
  if (typeof v !== 'string' || !/^0x[0-9a-fA-F]{1,64}$/.test(v)) throw invalidParams('invalid argument 0: invalid filter id')
  return v
}
