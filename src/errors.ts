// The error vocabulary every layer throws: JSON-RPC error codes, RpcError and its constructors. Wordings
// follow geth, because ethers, viem and web3.js match these strings (see
// shared/reference/access-service-conventions.md). chain/ and exec/ throw these; src/rpc/envelope.ts is
// the one place that turns a thrown error into a JSON-RPC answer.

export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  Internal: -32603,
  /** geth's default for every plain error, including all txpool rejections. */
  Server: -32000,
  ResourceNotFound: -32001,
  Timeout: -32002,
  ResponseTooLarge: -32003,
  LimitExceeded: -32005,
  /** geth's clientLimitExceededError (eth_getStorageValues' slot limit). */
  ClientLimitExceeded: -38026,
  ExecutionReverted: 3,
} as const

export class RpcError extends Error {
  readonly code: number
  readonly data: unknown
  constructor(code: number, message: string, data?: unknown) {
    super(message)
    this.name = 'RpcError'
    this.code = code
    this.data = data
  }
}

export const parseError = (): RpcError => new RpcError(ErrorCode.ParseError, 'parse error')
export const invalidRequest = (message = 'invalid request'): RpcError =>
  new RpcError(ErrorCode.InvalidRequest, message)
export const methodNotFound = (method: string): RpcError =>
  new RpcError(ErrorCode.MethodNotFound, `the method ${method} does not exist/is not available`)
export const invalidParams = (message: string, data?: unknown): RpcError =>
  new RpcError(ErrorCode.InvalidParams, message, data)
export const internalError = (message = 'internal error'): RpcError => new RpcError(ErrorCode.Internal, message)
export const serverError = (message: string, data?: unknown): RpcError =>
  new RpcError(ErrorCode.Server, message, data)
export const limitExceeded = (message = 'limit exceeded'): RpcError =>
  new RpcError(ErrorCode.LimitExceeded, message)
export const clientLimitExceeded = (message: string): RpcError => new RpcError(ErrorCode.ClientLimitExceeded, message)

/**
 * The node cannot write its database (disk full, a failed write): a submission is refused before it
 * reaches the pool. -32603, a server-side fault that clients (viem among them) retry.
 */
export const storageUnavailable = (reason: string): RpcError =>
  new RpcError(ErrorCode.Internal, `transaction not accepted: the node cannot write its database (${reason}); retry later`)

/** A reverted eth_call / eth_estimateGas, shaped as geth: code 3, data always hex. */
export const executionReverted = (reason: string | undefined, data: string): RpcError =>
  new RpcError(ErrorCode.ExecutionReverted, reason ? `execution reverted: ${reason}` : 'execution reverted', data)

/** Txpool and transaction validation errors, worded exactly as geth words them (code -32000). */
export const TxError = {
  nonceTooLow: (next: bigint, nonce: bigint) => serverError(`nonce too low: next nonce ${next}, tx nonce ${nonce}`),
  nonceTooHigh: (nonce: bigint, gapped: bigint) =>
    serverError(`nonce too high: tx nonce ${nonce}, gapped nonce ${gapped}`),
  alreadyKnown: () => serverError('already known'),
  replacementUnderpriced: () => serverError('replacement transaction underpriced'),
  underpriced: () => serverError('transaction underpriced'),
  insufficientFunds: (balance: bigint, cost: bigint) =>
    serverError(
      `insufficient funds for gas * price + value: balance ${balance}, tx cost ${cost}, overshot ${cost - balance}`,
    ),
  intrinsicGasTooLow: (gas: bigint, needed: bigint) =>
    serverError(`intrinsic gas too low: gas ${gas}, minimum needed ${needed}`),
  feeCapTooLow: (address: string, maxFee: bigint, baseFee: bigint) =>
    serverError(
      `max fee per gas less than block base fee: address ${address}, maxFeePerGas: ${maxFee}, baseFee: ${baseFee}`,
    ),
  tipAboveFeeCap: () => serverError('max priority fee per gas higher than max fee per gas'),
  exceedsBlockGasLimit: () => serverError('exceeds block gas limit'),
  gasLimitTooHigh: (cap: bigint, gas: bigint) =>
    serverError(`transaction gas limit too high (cap: ${cap}, tx: ${gas})`),
  oversizedData: (size: number, limit: number) =>
    serverError(`oversized data: transaction size ${size}, limit ${limit}`),
  invalidChainId: (have: bigint, want: bigint) =>
    serverError(`invalid chain id for signer: have ${have} want ${want}`),
  invalidSender: (cause: string) => serverError(`invalid sender: ${cause}`),
  notReplayProtected: () => serverError('only replay-protected (EIP-155) transactions allowed over RPC'),
  feeCapExceeded: (feeEther: string, capEther: string) =>
    serverError(`tx fee (${feeEther} ether) exceeds the configured cap (${capEther} ether)`),
  typeNotSupported: (type: number) =>
    serverError(`transaction type not supported: tx type ${type} not supported by this pool`),
  poolFull: () => serverError('txpool is full'),
  accountLimit: (pooled: number) => serverError(`account limit exceeded: pooled ${pooled} txs`),
} as const

/** Serialisable form used to carry an RpcError across a worker boundary. */
export interface RpcErrorShape {
  code: number
  message: string
  data?: unknown
}

export const toShape = (err: RpcError): RpcErrorShape =>
  err.data === undefined ? { code: err.code, message: err.message } : { code: err.code, message: err.message, data: err.data }

export const fromShape = (shape: RpcErrorShape): RpcError => new RpcError(shape.code, shape.message, shape.data)
