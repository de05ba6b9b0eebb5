// Method name -> handler. The envelope calls `call`; it knows nothing of what methods exist.

import type { MethodHandler, RequestContext } from './context.js'
import { methodNotFound } from '../errors.js'

export class Dispatcher {
  private readonly handlers = new Map<string, MethodHandler>()

  register(name: string, handler: MethodHandler): void {
    if (this.handlers.has(name)) throw new Error(`method ${name} registered twice`)
    this.handlers.set(name, handler)
  }

  registerAll(group: Record<string, MethodHandler>): void {
    for (const [name, handler] of Object.entries(group)) this.register(name, handler)
  }

  /** Puts `wrap`'s handler in place of a registered method's. */
  wrap(name: string, wrap: (inner: MethodHandler) => MethodHandler): void {
    const inner = this.handlers.get(name)
    if (inner === undefined) throw new Error(`method ${name} is not registered`)
    this.handlers.set(name, wrap(inner))
  }

  has(name: string): boolean {
    return this.handlers.has(name)
  }

  methods(): string[] {
    return [...this.handlers.keys()]
  }

  /** Resolves to the result, or rejects with an RpcError (or any Error, which the envelope maps to -32603). */
  call(method: string, params: readonly unknown[], ctx: RequestContext): unknown {
    const handler = this.handlers.get(method)
    if (handler === undefined) throw methodNotFound(method)
    return handler(params, ctx)
  }
}
