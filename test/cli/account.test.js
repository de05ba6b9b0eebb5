// keel account new | import | list: v3 keystores that ethers opens, and that Keel opens from ethers.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Wallet, encryptKeystoreJson } from 'ethers'
import { run } from '../../dist/cli/main.js'
import { decryptKeystore, encryptKeystore, LIGHT_SCRYPT, WrongPassphraseError } from '../../dist/operator/keystore.js'

const ANVIL_KEY_1 = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d'
const ANVIL_ADDRESS_1 = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8'

function tempDir(t) {
  const dir = mkdtempSync(join(tmpdir(), 'keel-account-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

async function keel(args, env = {}) {
  const io = { out: '', err: '', env, cwd: tmpdir(), stdout: (s) => { io.out += s }, stderr: (s) => { io.err += s } }
  const code = await run(args, io)
  return { code, stdout: io.out, stderr: io.err }
}

test('account new writes a v3 scrypt keystore (0600) that ethers decrypts; a wrong passphrase fails', async (t) => {
  const dataDir = tempDir(t)
  const { code, stdout, stderr } = await keel(['account', 'new', '--data-dir', dataDir, '--light-kdf'], { KEEL_PASSPHRASE: 'pa55 phrase' })
  assert.equal(stderr, '')
  assert.equal(code, 0)
  const address = /^created (0x[0-9a-fA-F]{40})$/m.exec(stdout)[1]
  const path = /^keystore (.+)$/m.exec(stdout)[1]
  assert.ok(path.startsWith(join(dataDir, 'keystore', 'UTC--')))
  assert.ok(path.endsWith(`--${address.slice(2).toLowerCase()}`))
  assert.equal(statSync(path).mode & 0o777, 0o600)
  const json = JSON.parse(readFileSync(path, 'utf8'))
  assert.equal(json.version, 3)
  assert.equal(json.address, address.slice(2).toLowerCase())
  assert.equal(json.crypto.cipher, 'aes-128-ctr')
  assert.equal(json.crypto.kdf, 'scrypt')
  assert.deepEqual(Object.keys(json.crypto.kdfparams).sort(), ['dklen', 'n', 'p', 'r', 'salt'])
  assert.match(json.crypto.mac, /^[0-9a-f]{64}$/)
  assert.match(json.id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)

  const wallet = await Wallet.fromEncryptedJson(readFileSync(path, 'utf8'), 'pa55 phrase')
  assert.equal(wallet.address, address)
  await assert.rejects(Wallet.fromEncryptedJson(readFileSync(path, 'utf8'), 'pa55 phrasE'), /incorrect password/)
  await assert.rejects(decryptKeystore(json, 'nope', path), WrongPassphraseError)
})

test('the standard scrypt cost (n = 262144) round trips through ethers too', async () => {
  const keystore = await encryptKeystore(Buffer.from(ANVIL_KEY_1.slice(2), 'hex'), 'slow and strong')
  assert.equal(keystore.crypto.kdfparams.n, 262144)
  const wallet = await Wallet.fromEncryptedJson(JSON.stringify(keystore), 'slow and strong')
  assert.equal(wallet.privateKey, ANVIL_KEY_1)
})

test('Keel decrypts keystores written by ethers (scrypt) and rejects a wrong passphrase', async () => {
  const json = await encryptKeystoreJson({ address: ANVIL_ADDRESS_1, privateKey: ANVIL_KEY_1 }, 'from ethers', { scrypt: { N: 1024 } })
  const key = await decryptKeystore(JSON.parse(json), 'from ethers')
  assert.equal(`0x${Buffer.from(key).toString('hex')}`, ANVIL_KEY_1)
  await assert.rejects(decryptKeystore(JSON.parse(json), 'from ether'), WrongPassphraseError)
})

test('import of a 0x key, refusal of a duplicate and of a malformed key; list shows them', async (t) => {
  const dataDir = tempDir(t)
  const passFile = join(dataDir, 'pass')
  writeFileSync(passFile, 'from a file\nsecond line ignored\n')
  const imported = await keel(['account', 'import', ANVIL_KEY_1, '--data-dir', dataDir, '--passphrase-file', passFile, '--light-kdf'])
  assert.equal(imported.code, 0, imported.stderr)
  assert.match(imported.stdout, new RegExp(`^imported ${ANVIL_ADDRESS_1}$`, 'm'))
  const path = /^keystore (.+)$/m.exec(imported.stdout)[1]
  assert.equal((await Wallet.fromEncryptedJson(readFileSync(path, 'utf8'), 'from a file')).address, ANVIL_ADDRESS_1)

  const again = await keel(['account', 'import', ANVIL_KEY_1, '--data-dir', dataDir, '--passphrase-file', passFile, '--light-kdf'])
  assert.equal(again.code, 2)
  assert.equal(again.stderr, `keel: ${ANVIL_ADDRESS_1} already has a keystore: ${path}\n`)
  const bad = await keel(['account', 'import', '0x1234', '--data-dir', dataDir, '--passphrase-file', passFile])
  assert.equal(bad.code, 2)
  assert.equal(bad.stderr, 'keel: invalid private key: expected 0x followed by 64 hex digits\n')

  const list = await keel(['account', 'list', '--data-dir', dataDir])
  assert.equal(list.code, 0)
  assert.equal(list.stdout, `${ANVIL_ADDRESS_1}  ${path}\n`)
})

test('import --from-operator-key converts the plain key; --delete-plain-key removes it afterwards', async (t) => {
  const dataDir = tempDir(t)
  writeFileSync(join(dataDir, 'operator.key'), `${ANVIL_KEY_1}\n`, { mode: 0o600 })
  const before = await keel(['account', 'list', '--data-dir', dataDir])
  assert.equal(before.stdout, `${ANVIL_ADDRESS_1}  ${join(dataDir, 'operator.key')} (plain, unencrypted)\n`)
  const converted = await keel(['account', 'import', '--from-operator-key', '--delete-plain-key', '--data-dir', dataDir, '--light-kdf'], { KEEL_PASSPHRASE: 'env pass' })
  assert.equal(converted.code, 0, converted.stderr)
  assert.match(converted.stdout, new RegExp(`^converted ${ANVIL_ADDRESS_1}$`, 'm'))
  assert.equal(existsSync(join(dataDir, 'operator.key')), false)
  const path = /^keystore (.+)$/m.exec(converted.stdout)[1]
  const key = await decryptKeystore(JSON.parse(readFileSync(path, 'utf8')), 'env pass')
  assert.equal(`0x${Buffer.from(key).toString('hex')}`, ANVIL_KEY_1)
  const none = await keel(['account', 'import', '--from-operator-key', '--data-dir', dataDir], { KEEL_PASSPHRASE: 'x' })
  assert.equal(none.code, 2)
  assert.equal(none.stderr, `keel: no plain operator key at ${join(dataDir, 'operator.key')}\n`)
})

test('without a passphrase source and no terminal, account new exits 2 and writes nothing', async (t) => {
  const dataDir = tempDir(t)
  const { code, stderr } = await keel(['account', 'new', '--data-dir', dataDir])
  assert.equal(code, 2)
  assert.equal(stderr, 'keel: no passphrase: give --passphrase-file FILE, set KEEL_PASSPHRASE, or run in a terminal\n')
  assert.equal(existsSync(join(dataDir, 'keystore')), false)
  const usage = await keel(['account', 'rename', '--data-dir', dataDir])
  assert.equal(usage.code, 2)
  assert.equal(usage.stderr, 'keel: unknown subcommand "rename" for keel account; expected new, import or list\n')
})

test('LIGHT_SCRYPT is geth\'s light cost', () => {
  assert.deepEqual({ ...LIGHT_SCRYPT }, { n: 4096, r: 8, p: 6 })
})
