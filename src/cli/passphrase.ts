// Where a keystore passphrase comes from: --passphrase-file FILE (its first line), the KEEL_PASSPHRASE
// environment variable, or a hidden prompt on the terminal (raw mode, nothing echoed; no dependency).

import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { UsageError } from './args.js'
import type { CliIo } from './command.js'

export const PASSPHRASE_ENV = 'KEEL_PASSPHRASE'
export const PASSPHRASE_FILE_FLAG = 'passphrase-file'

export interface PassphraseSource {
  /** Asks for (or reads) the passphrase; `confirm` asks twice on a terminal, for new keystores. */
  get(purpose: string, confirm?: boolean): Promise<string>
}

export function passphraseSource(flags: Record<string, string | boolean>, io: CliIo): PassphraseSource {
  const file = flags[PASSPHRASE_FILE_FLAG]
  if (file === true) throw new UsageError(`missing value for --${PASSPHRASE_FILE_FLAG}`)
  return {
    async get(purpose, confirm = false) {
      if (typeof file === 'string') return readPassphraseFile(resolve(io.cwd, file))
      const fromEnv = io.env[PASSPHRASE_ENV]
      if (fromEnv !== undefined && fromEnv !== '') return fromEnv
      if (!process.stdin.isTTY) {
        throw new UsageError(`no passphrase: give --${PASSPHRASE_FILE_FLAG} FILE, set ${PASSPHRASE_ENV}, or run in a terminal`)
      }
      const first = await promptHidden(`${purpose}: `)
      if (confirm) {
        const again = await promptHidden('repeat the passphrase: ')
        if (again !== first) throw new UsageError('the passphrases do not match')
      }
      if (first === '') throw new UsageError('empty passphrase')
      return first
    },
  }
}

function readPassphraseFile(path: string): string {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message
    throw new UsageError(`cannot read passphrase file ${path}: ${reason}`)
  }
  const line = text.split(/\r?\n/, 1)[0] ?? ''
  if (line === '') throw new UsageError(`passphrase file ${path} is empty`)
  return line
}

/** Reads one line from the terminal without echoing it. Ctrl-C cancels. */
export function promptHidden(question: string): Promise<string> {
  const stdin = process.stdin
  process.stderr.write(question)
  stdin.setRawMode(true)
  stdin.setEncoding('utf8')
  stdin.resume()
  return new Promise((resolvePromise, reject) => {
    let value = ''
    const finish = (): void => {
      stdin.off('data', onData)
      stdin.setRawMode(false)
      stdin.pause()
      process.stderr.write('\n')
    }
    const onData = (chunk: string): void => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n' || ch === '\u0004') {
          finish()
          resolvePromise(value)
          return
        }
        if (ch === '\u0003') {
          finish()
          reject(new UsageError('cancelled'))
          return
        }
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1)
        else value += ch
      }
    }
    stdin.on('data', onData)
  })
}
