// The state trie's point lookups (src/chain/store/trie-reader.ts) over nodes already in its cache: µs a
// lookup of a present and of a missing key, and the bytes the cache holds a node (heap and buffers, after a
// full collection). A trie of 30,000 hashed keys with 33-byte values (a storage trie's shape), built in
// memory by @ethereumjs/mpt; each node the reader fetches is a fresh copy, as a LevelDB read is.
//
//   npm run build && node --expose-gc bench/micro/trie-reader.js [TREE ...]    (not part of `npm run bench`)
//
// TREE: a built checkout (a git worktree) whose dist/ to measure, several to compare (run in turn, each in
// its own process); the default is this one.

import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { dirname, join, resolve } from 'node:path'

const here = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const KEYS = 30_000
const ROUNDS = 5

if (process.argv[2] !== '--child') {
  const trees = process.argv.slice(2)
  for (const tree of trees.length > 0 ? trees : [here]) {
    const r = spawnSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), '--child', resolve(tree)], { encoding: 'utf8' })
    process.stdout.write(`${tree}\n${r.stdout}${r.stderr}`)
  }
} else {
  const tree = process.argv[3]
  const { TrieReader } = await import(join(tree, 'dist/chain/store/trie-reader.js'))
  const { MerklePatriciaTrie } = await import('@ethereumjs/mpt')
  const { hexToBytes } = await import('@ethereumjs/util')
  const { keccak_256 } = await import('@noble/hashes/sha3.js')

  const trie = new MerklePatriciaTrie()
  const keys = []
  for (let i = 0; i < KEYS; i++) {
    const k = keccak_256(Uint8Array.of(i >> 16, (i >> 8) & 255, i & 255))
    keys.push(k)
    await trie.put(k, Uint8Array.of(0xa0, ...keccak_256(k)))
  }
  const missing = keys.map((k) => keccak_256(k))
  const db = trie.database()
  const reader = new TrieReader({ fetch: async (hex) => { const v = await db.get(hexToBytes(`0x${hex}`)); return v && Uint8Array.from(v) } }, 1 << 30)
  const held = () => {
    global.gc()
    const u = process.memoryUsage()
    return u.heapUsed + u.arrayBuffers
  }
  const before = held()
  for (const k of keys) await reader.get(trie.root(), k)
  const nodes = reader.nodes.size
  console.log(`  ${nodes} nodes cached, ${Math.round((held() - before) / nodes)} bytes held a node`)
  for (const k of missing) await reader.get(trie.root(), k)
  for (let round = 0; round < ROUNDS; round++) {
    let t = performance.now()
    for (const k of keys) await reader.get(trie.root(), k)
    const present = ((performance.now() - t) * 1000) / KEYS
    t = performance.now()
    for (const k of missing) await reader.get(trie.root(), k)
    const absent = ((performance.now() - t) * 1000) / KEYS
    console.log(`  round ${round}: present key ${present.toFixed(2)} µs, missing key ${absent.toFixed(2)} µs`)
  }
}
