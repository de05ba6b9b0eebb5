// trace_replayTransaction's `stateDiff` (OpenEthereum's shape, which Erigon keeps and Otterscan's State
// tab reads), made from geth's prestateTracer in diff mode (exec/trace/prestate-tracer.ts): `pre` holds
// the changed accounts as they were (unchanged and empty slots left out), `post` what changed (cleared
// slots left out); an account only in `post` was created, one only in `pre` was destroyed.
// Each field is "=" (unchanged), {"+": new} (created), {"-": old} (destroyed) or {"*": {from, to}}.

interface PrestateAccount {
  balance?: string
  nonce?: number
  code?: string
  storage?: Record<string, string>
}

export interface PrestateDiff {
  pre: Record<string, PrestateAccount>
  post: Record<string, PrestateAccount>
}

type FieldDiff = '=' | { '+': string } | { '-': string } | { '*': { from: string; to: string } }

export interface AccountDiff {
  balance: FieldDiff
  nonce: FieldDiff
  code: FieldDiff
  storage: Record<string, FieldDiff>
}

const ZERO_WORD = `0x${'0'.repeat(64)}`
const hexNonce = (n: number | undefined): string => `0x${(n ?? 0).toString(16)}`

export function parityStateDiff(diff: PrestateDiff): Record<string, AccountDiff> {
  const out: Record<string, AccountDiff> = {}
  const addresses = [...new Set([...Object.keys(diff.pre), ...Object.keys(diff.post)])].sort()
  for (const address of addresses) {
    const pre = diff.pre[address]
    const post = diff.post[address]
    if (pre === undefined) {
      // created by the transaction
      out[address] = wholeAccount(post, '+')
      continue
    }
    if (post === undefined) {
      // destroyed by the transaction
      out[address] = wholeAccount(pre, '-')
      continue
    }
    const storage: Record<string, FieldDiff> = {}
    for (const [slot, to] of Object.entries(post.storage ?? {})) storage[slot] = { '*': { from: pre.storage?.[slot] ?? ZERO_WORD, to } }
    // a slot in pre that post leaves out was cleared
    for (const [slot, from] of Object.entries(pre.storage ?? {})) if (post.storage?.[slot] === undefined) storage[slot] = { '*': { from, to: ZERO_WORD } }
    out[address] = {
      balance: post.balance === undefined ? '=' : { '*': { from: pre.balance ?? '0x0', to: post.balance } },
      nonce: post.nonce === undefined ? '=' : { '*': { from: hexNonce(pre.nonce), to: hexNonce(post.nonce) } },
      code: post.code === undefined ? '=' : { '*': { from: pre.code ?? '0x', to: post.code } },
      storage: Object.fromEntries(Object.entries(storage).sort(([a], [b]) => (a < b ? -1 : 1))),
    }
  }
  return out
}

/** An account the transaction created ('+', every field born) or destroyed ('-', every field gone). */
function wholeAccount(account: PrestateAccount, sign: '+' | '-'): AccountDiff {
  const field = (value: string): FieldDiff => (sign === '+' ? { '+': value } : { '-': value })
  return {
    balance: field(account.balance ?? '0x0'),
    nonce: field(hexNonce(account.nonce)),
    code: field(account.code ?? '0x'),
    storage: Object.fromEntries(Object.entries(account.storage ?? {}).map(([slot, value]) => [slot, field(value)])),
  }
}
