// What piscina needs to cancel a task (its abort.js): `aborted`, `reason`, and an emitter-style
// once('abort') / removeListener. The pool makes one per piscina task; Node's AbortController brings an
// EventTarget with it, and creating one and adding and removing its listener was ~3% of the main
// thread's time under unique eth_call load (--cpu-prof). Fires its listener at most once.

export class TaskAbort {
  aborted = false
  reason: unknown = undefined
  private listener: (() => void) | undefined

  once(_event: 'abort', listener: () => void): void {
    this.listener = listener
  }

  off(_event: 'abort', listener: () => void): void {
    if (this.listener === listener) this.listener = undefined
  }

  /** piscina's abort.js removes its listener with this name; its typings say `off` */
  removeListener(event: 'abort', listener: () => void): void {
    this.off(event, listener)
  }

  abort(reason: unknown = new Error('aborted')): void {
    if (this.aborted) return
    this.aborted = true
    this.reason = reason
    const listener = this.listener
    this.listener = undefined
    listener?.()
  }
}
