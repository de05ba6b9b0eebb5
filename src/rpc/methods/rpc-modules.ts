// rpc_modules (geth's RPCService.Modules): the namespaces this endpoint serves, each at version "1.0",
// with "rpc" itself among them. Tools ask it to see which APIs a node exposes.

import type { Dispatcher } from '../dispatch.js'
import type { MethodHandler } from '../context.js'
import * as p from '../params.js'

export function rpcModulesMethod(dispatcher: Dispatcher): Record<string, MethodHandler> {
  let modules: Record<string, string> | undefined
  return {
    rpc_modules: (params) => {
      p.expectParams(params, 0, 0)
      // every method is registered before the server answers its first request
      modules ??= modulesOf(dispatcher.methods())
      return modules
    },
  }
}

function modulesOf(methods: string[]): Record<string, string> {
  const namespaces = new Set(['rpc'])
  for (const name of methods) {
    const cut = name.indexOf('_')
    if (cut > 0) namespaces.add(name.slice(0, cut))
  }
  return Object.fromEntries([...namespaces].sort().map((ns) => [ns, '1.0']))
}
