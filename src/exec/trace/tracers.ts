// The tracer a debug_trace* request names, for one transaction.

import type { TraceOptions } from '../types.js'
import { CallTracer } from './call-tracer.js'
import { FourByteTracer } from './four-byte-tracer.js'
import { MuxTracer } from './mux-tracer.js'
import { PrestateTracer } from './prestate-tracer.js'
import { StructLogger } from './struct-logger.js'
import type { Deadline, TxTracer } from './tracer.js'

/** geth's noopTracer: runs nothing, reports an empty object. */
const NOOP: TxTracer = { attach() {}, detach() {}, result: () => '{}' }

export function createTracer(options: TraceOptions, gasLimit: bigint, deadline: Deadline): TxTracer {
  switch (options.tracer) {
    case 'structLogger':
      return new StructLogger(options, deadline)
    case 'callTracer':
      return new CallTracer(gasLimit, deadline, options.onlyTopCall, options.withLog)
    case '4byteTracer':
      return new FourByteTracer(deadline)
    case 'noopTracer':
      return NOOP
    case 'prestateTracer':
      return new PrestateTracer(options.prestate, deadline)
    case 'muxTracer':
      return new MuxTracer(options.mux.map((m) => ({ name: m.name, tracer: createTracer(m.options, gasLimit, deadline) })))
  }
}
