// web3_* and net_*: identity of the node and the network.

import type { MethodHandler } from '../context.js'
import { bytesToHex } from '../../util/hex.js'
import * as p from '../params.js'
import type { MethodDeps } from './deps.js'

export function web3NetMethods(deps: MethodDeps): Record<string, MethodHandler> {
  const netVersion = String(deps.config.chainId)
  return {
    web3_clientVersion: (params) => {
      p.expectParams(params, 0, 0)
      return deps.clientVersion
    },
    web3_sha3: (params) => {
      p.expectParams(params, 1, 1)
      return bytesToHex(deps.keccak(p.data(params[0], 0)))
    },
    net_version: (params) => {
      p.expectParams(params, 0, 0)
      return netVersion
    },
    net_listening: (params) => {
      p.expectParams(params, 0, 0)
      return true
    },
    net_peerCount: (params) => {
      p.expectParams(params, 0, 0)
      return '0x0'
    },
  }
}
