// An EIP-7702 authorization list as @ethereumjs/tx's constructors take it (hex strings), from the parsed
// form the RPC layer and the call tasks carry.

import type { ExecAuthorization } from './types.js'

export function authorizationListData(list: readonly ExecAuthorization[]): Record<string, string>[] {
  return list.map((a) => ({
    chainId: `0x${a.chainId.toString(16)}`,
    address: a.address,
    nonce: `0x${a.nonce.toString(16)}`,
    yParity: `0x${a.yParity.toString(16)}`,
    r: `0x${a.r.toString(16)}`,
    s: `0x${a.s.toString(16)}`,
  }))
}
