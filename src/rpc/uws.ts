// Loads uWebSockets.js's native addon directly. The package entry (src/uws.js) silently falls back to a
// slow pure-JS server when the binary does not load; Keel would rather refuse to start.

import { createRequire } from 'node:module'
import type * as Uws from 'uWebSockets.js'

export type {
  HttpRequest,
  HttpResponse,
  TemplatedApp,
  WebSocket,
  WebSocketBehavior,
  us_listen_socket,
  us_socket_context_t,
} from 'uWebSockets.js'

const require = createRequire(import.meta.url)

const binaryName = `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`

const resolveBinary = (): string => {
  try {
    return require.resolve(`uWebSockets.js/binaries/${binaryName}`)
  } catch {
    throw new Error(
      `uWebSockets.js has no native binary ${binaryName} for this platform/Node.js ABI ` +
        `(node ${process.version}); use a Node.js version it ships binaries for`,
    )
  }
}

/** Absolute path of the native addon in use: proof that the server is not the JS fallback. */
export const uwsBinaryPath: string = resolveBinary()

const loadBinary = (): typeof Uws => {
  try {
    return require(uwsBinaryPath) as typeof Uws
  } catch (err) {
    throw new Error(`cannot load the uWebSockets.js native binary ${uwsBinaryPath}: ${(err as Error).message}`, {
      cause: err,
    })
  }
}

export const uws: typeof Uws = loadBinary()

/** The native app also has close() (closes every socket), missing from the package's typings. */
export interface ClosableApp extends Uws.TemplatedApp {
  close(): void
}
