// Some @ethereumjs/evm classes (the Interpreter) are not exported, and some fixes need the EVM's own
// module instances. A package's "require" entry is dist/cjs/index.js; the ESM build the node loads sits
// beside it, so its modules are found by path and imported by the same URL the EVM itself uses.

import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { pathToFileURL } from 'node:url'

const require = createRequire(import.meta.url)

/** The path of dist/esm/<file> in an installed @ethereumjs package. */
export function ethereumjsEsmFile(pkg: string, file: string): string {
  return join(dirname(require.resolve(pkg)), '..', 'esm', file)
}

/** Imports dist/esm/<file> of an installed @ethereumjs package (the very module the package itself runs). */
export async function importEthereumjsModule<T>(pkg: string, file: string): Promise<T> {
  return (await import(pathToFileURL(ethereumjsEsmFile(pkg, file)).href)) as T
}

/** Imports dist/esm/<file> of the installed @ethereumjs/evm. */
export function importEvmModule<T>(file: string): Promise<T> {
  return importEthereumjsModule<T>('@ethereumjs/evm', file)
}
