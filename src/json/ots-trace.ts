// Otterscan's views of one transaction's execution, made from geth's callTracer tree (exec/trace/
// call-tracer.ts) as Erigon makes them from its own tracers (rpc/jsonrpc/otterscan_trace_transaction.go,
// otterscan_trace_operations.go, otterscan_transaction_error.go):
// - ots_traceTransaction: every frame in pre-order, `depth` a JSON number from 0, `value` null for
//   STATICCALL and DELEGATECALL, a SELFDESTRUCT one level below the frame that ran it with the
//   beneficiary as `to`, calls to precompiles left out;
// - ots_getInternalOperations: the frames below the top one that move ether or make or end contracts,
//   `type` a JSON number (0 transfer, 1 selfdestruct, 2 CREATE, 3 CREATE2);
// - ots_getTransactionError: the top frame's revert data, "0x" when it did not revert.

/** A frame of geth's callTracer output, as JSON. */
export interface CallTracerFrame {
  type: string
  from: string
  to?: string
  value?: string
  input?: string
  output?: string
  error?: string
  calls?: CallTracerFrame[]
}

export interface OtsTraceEntry {
  type: string
  depth: number
  from: string
  to: string
  value: string | null
  input: string
  output: string
}

export interface OtsInternalOperation {
  type: number
  from: string
  to: string
  value: string
}

const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000'

/** Erigon reports a call that could not start (a failed creation has no address) with the zero address. */
const toOf = (f: CallTracerFrame): string => f.to ?? ZERO_ADDRESS

/**
 * The precompiles of the forks Keel runs (0x01-0x11, P256VERIFY at 0x100): Erigon's tracer is not told
 * of calls to them. An address in this range holds no code on a chain that has not activated it, so a
 * call there is a plain call either way.
 */
function isPrecompile(address: string | undefined): boolean {
  if (address === undefined || !address.startsWith('0x000000000000000000000000000000000000')) return false
  const n = Number.parseInt(address.slice(-4), 16)
  return (n >= 1 && n <= 0x11) || n === 0x100
}

export function otsTraceEntries(root: CallTracerFrame): OtsTraceEntry[] {
  const out: OtsTraceEntry[] = []
  const walk = (f: CallTracerFrame, depth: number): void => {
    if (depth > 0 && isPrecompile(f.to) && f.type !== 'SELFDESTRUCT') return
    const valueless = f.type === 'STATICCALL' || f.type === 'DELEGATECALL'
    out.push({
      type: f.type,
      depth,
      from: f.from,
      to: toOf(f),
      value: valueless ? null : (f.value ?? '0x0'),
      input: f.type === 'SELFDESTRUCT' ? '0x' : (f.input ?? '0x'),
      output: f.output ?? '0x',
    })
    for (const c of f.calls ?? []) walk(c, depth + 1)
  }
  walk(root, 0)
  return out
}

const OPERATION_TYPES: Record<string, number> = { SELFDESTRUCT: 1, CREATE: 2, CREATE2: 3 }

export function otsInternalOperations(root: CallTracerFrame): OtsInternalOperation[] {
  const out: OtsInternalOperation[] = []
  const walk = (f: CallTracerFrame, depth: number): void => {
    if (depth > 0) {
      const value = f.value ?? '0x0'
      if (f.type === 'CALL' && value !== '0x0') out.push({ type: 0, from: f.from, to: toOf(f), value })
      const type = OPERATION_TYPES[f.type]
      if (type !== undefined) out.push({ type, from: f.from, to: toOf(f), value })
    }
    for (const c of f.calls ?? []) walk(c, depth + 1)
  }
  walk(root, 0)
  return out
}

export function otsTransactionError(root: CallTracerFrame): string {
  return root.error === 'execution reverted' ? (root.output ?? '0x') : '0x'
}
