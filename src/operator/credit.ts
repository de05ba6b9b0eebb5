// Crediting an address from the treasury: an EIP-1559 transfer signed with the operator key and sent
// through a running node like any wallet's, then the receipt and the recipient's new balance.
// Nothing on the public endpoint mints or credits; the treasury is an ordinary funded account.

import { Mainnet, createCustomCommon } from '@ethereumjs/common'
import { createFeeMarket1559Tx } from '@ethereumjs/tx'
import { bytesToHex, toChecksumAddress } from '@ethereumjs/util'
import { Refusal } from './refusal.js'
import { JsonRpcClient, RpcCallError } from './rpc-client.js'
import { formatAmount } from './units.js'

export interface CreditRequest {
  rpcUrl: string
  privateKey: Uint8Array
  from: string
  to: string
  amountWei: bigint
  /** How long to wait for the receipt. */
  timeoutMs: number
}

export interface CreditResult {
  txHash: string
  blockNumber: bigint
  gasUsed: bigint
  newBalanceWei: bigint
  treasuryBalanceWei: bigint
}

const TRANSFER_GAS = 21_000n
const RECEIPT_POLL_MS = 200

interface Receipt {
  status: string
  blockNumber: string
  gasUsed: string
}

export async function credit(req: CreditRequest): Promise<CreditResult> {
  const rpc = new JsonRpcClient(req.rpcUrl)
  const [chainIdHex, nonceHex, latest, tipHex, treasuryHex] = await Promise.all([
    rpc.call<string>('eth_chainId'),
    rpc.call<string>('eth_getTransactionCount', [req.from, 'pending']),
    rpc.call<{ baseFeePerGas?: string } | null>('eth_getBlockByNumber', ['latest', false]),
    rpc.call<string>('eth_maxPriorityFeePerGas'),
    rpc.call<string>('eth_getBalance', [req.from, 'latest']),
  ])
  const treasury = BigInt(treasuryHex)
  if (req.amountWei > treasury) {
    throw new Refusal(`amount ${formatAmount(req.amountWei)} ether is above the treasury balance: ${toChecksumAddress(req.from)} holds ${formatAmount(treasury)} ether`)
  }
  const gasLimit = await estimateTransferGas(rpc, req)
  const tip = BigInt(tipHex)
  const maxFee = 2n * BigInt(latest?.baseFeePerGas ?? '0x0') + tip
  const maxGasCost = gasLimit * maxFee
  if (req.amountWei + maxGasCost > treasury) {
    throw new Refusal(
      `amount ${formatAmount(req.amountWei)} ether plus up to ${formatAmount(maxGasCost)} ether of gas is above the treasury balance: ${toChecksumAddress(req.from)} holds ${formatAmount(treasury)} ether`,
    )
  }

  const chainId = BigInt(chainIdHex)
  const common = createCustomCommon({ chainId: Number(chainId) }, Mainnet)
  const tx = createFeeMarket1559Tx(
    { chainId, nonce: BigInt(nonceHex), maxPriorityFeePerGas: tip, maxFeePerGas: maxFee, gasLimit, to: req.to as `0x${string}`, value: req.amountWei },
    { common },
  ).sign(req.privateKey)
  const txHash = await rpc.call<string>('eth_sendRawTransaction', [bytesToHex(tx.serialize())])
  const receipt = await waitForReceipt(rpc, txHash, req.timeoutMs)
  if (receipt.status !== '0x1') throw new Error(`transaction ${txHash} failed in block ${BigInt(receipt.blockNumber)} (status ${receipt.status})`)
  const [balanceHex, treasuryAfterHex] = await Promise.all([
    rpc.call<string>('eth_getBalance', [req.to, 'latest']),
    rpc.call<string>('eth_getBalance', [req.from, 'latest']),
  ])
  return {
    txHash,
    blockNumber: BigInt(receipt.blockNumber),
    gasUsed: BigInt(receipt.gasUsed),
    newBalanceWei: BigInt(balanceHex),
    treasuryBalanceWei: BigInt(treasuryAfterHex),
  }
}

/** 21,000 for an account; more when the recipient is a contract with a receive function. */
async function estimateTransferGas(rpc: JsonRpcClient, req: CreditRequest): Promise<bigint> {
  const code = await rpc.call<string>('eth_getCode', [req.to, 'latest'])
  if (code === '0x') return TRANSFER_GAS
  try {
    const estimate = BigInt(await rpc.call<string>('eth_estimateGas', [{ from: req.from, to: req.to, value: `0x${req.amountWei.toString(16)}` }]))
    return estimate < TRANSFER_GAS ? TRANSFER_GAS : estimate
  } catch (err) {
    if (err instanceof RpcCallError) throw new Refusal(`the contract at ${req.to} does not accept the transfer: ${err.rpcMessage}`)
    throw err
  }
}

async function waitForReceipt(rpc: JsonRpcClient, txHash: string, timeoutMs: number): Promise<Receipt> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const receipt = await rpc.call<Receipt | null>('eth_getTransactionReceipt', [txHash])
    if (receipt !== null) return receipt
    if (Date.now() >= deadline) throw new Error(`transaction ${txHash} was sent but not mined within ${timeoutMs / 1000} s; check it later with eth_getTransactionReceipt`)
    await new Promise((resolve) => setTimeout(resolve, RECEIPT_POLL_MS))
  }
}
