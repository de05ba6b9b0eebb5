// A stored block in its consensus encoding (what geth's export file and debug_getRawBlock hold): header,
// transactions (a typed one as a byte string, a legacy one as its list), uncle headers and, from
// Shanghai on, withdrawals.

import { RLP } from '@ethereumjs/rlp'
import type { Input } from '@ethereumjs/rlp'
import type { StoredBody } from './body.js'

/** @param headerRlp the header's RLP as stored; `withWithdrawals`: the header has a withdrawals root */
export function encodeBlockRlp(headerRlp: Uint8Array, body: StoredBody, withWithdrawals: boolean): Uint8Array {
  const txs: Input[] = body.txs.map((raw) => (raw.length > 0 && raw[0] < 0x80 ? raw : (RLP.decode(raw) as Input)))
  const fields: Input[] = [RLP.decode(headerRlp) as Input, txs, (body.uncles ?? []).map((u) => RLP.decode(u) as Input)]
  if (withWithdrawals) fields.push((body.withdrawals ?? []) as Input)
  return RLP.encode(fields)
}
