import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs, UsageError } from '../../dist/cli/args.js'
import { run } from '../../dist/cli/main.js'
import { startNode } from '../helpers/node.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const PKG = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'))

/** Runs bin/keel.js with a clean KEEL_* environment; resolves to { code, stdout, stderr }. */
function keel(args, extraEnv = {}) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('KEEL_')))
  return new Promise((resolve) => {
    execFile(process.execPath, ['bin/keel.js', ...args], { cwd: ROOT, env: { ...env, ...extraEnv }, timeout: 20_000 },
      (err, stdout, stderr) => resolve({ code: err ? err.code : 0, stdout, stderr }))
  })
}

function memoryIo(env = {}) {
  const io = { out: '', err: '', env, cwd: '/tmp', stdout: (t) => { io.out += t }, stderr: (t) => { io.err += t } }
  return io
}

test('keel --help lists the options and exits 0', async () => {
  const { code, stdout, stderr } = await keel(['--help'])
  assert.equal(code, 0)
  assert.equal(stderr, '')
  for (const flag of ['--data-dir', '--port', '--genesis', '--block-time', '--dev', '--empty-block-period', '--rpc-gas-cap', '--config']) {
    assert.match(stdout, new RegExp(`^  ${flag}\\b`, 'm'), flag)
  }
  assert.match(stdout, /env KEEL_PORT, default 8545/)
  assert.match(stdout, /keel start \[options\]/)
})

test('keel help and keel start --help print usage and exit 0', async () => {
  const help = await keel(['help'])
  assert.equal(help.code, 0)
  assert.match(help.stdout, /--data-dir DIR/)
  const startHelp = await keel(['start', '-h'])
  assert.equal(startHelp.code, 0)
  assert.match(startHelp.stdout, /^Usage: keel start \[options\]/)
  assert.match(startHelp.stdout, /--block-time SECONDS/)
})

test('keel --version prints the package version', async () => {
  const { code, stdout } = await keel(['--version'])
  assert.equal(code, 0)
  assert.equal(stdout, `${PKG.version}\n`)
})

test('keel start --port abc exits 2 with a clear one-line message', async () => {
  const { code, stdout, stderr } = await keel(['start', '--port', 'abc'])
  assert.equal(code, 2)
  assert.equal(stdout, '')
  assert.equal(stderr, 'keel: invalid value "abc" for --port (from command line): expected an integer from 0 to 65535\n')
})

test('a bad environment variable and an unknown flag exit 2', async () => {
  const env = await keel(['start'], { KEEL_BLOCK_TIME: 'soon' })
  assert.equal(env.code, 2)
  assert.equal(env.stderr, 'keel: invalid value "soon" for KEEL_BLOCK_TIME (from environment): expected a number from 0 to 86400\n')
  const flag = await keel(['start', '--frobnicate'])
  assert.equal(flag.code, 2)
  assert.equal(flag.stderr, 'keel: unknown option --frobnicate; see keel --help\n')
})

test('an unknown command exits 2 and points to the help', async () => {
  const { code, stdout, stderr } = await keel(['frobnicate'])
  assert.equal(code, 2)
  assert.equal(stdout, '')
  assert.equal(stderr, 'keel: unknown command "frobnicate"; see keel --help\n')
})

test('run(): no command, options before the command, stray arguments and help topics', async () => {
  let io = memoryIo()
  assert.equal(await run([], io), 2)
  assert.match(io.err, /^keel: missing command\n/)

  io = memoryIo()
  assert.equal(await run(['--port', '1'], io), 2)
  assert.equal(io.err, 'keel: expected a command before option --port; see keel --help\n')

  io = memoryIo()
  assert.equal(await run(['start', 'extra'], io), 2)
  assert.equal(io.err, 'keel: unexpected argument "extra" for keel start; see keel --help\n')

  io = memoryIo()
  assert.equal(await run(['start', '-x'], io), 2)
  assert.equal(io.err, 'keel: unknown option -x; see keel --help\n')

  io = memoryIo()
  assert.equal(await run(['help', 'start'], io), 0)
  assert.match(io.out, /--txpool-max-slots N/)

  io = memoryIo()
  assert.equal(await run(['help', 'nope'], io), 2)
  assert.equal(io.err, 'keel: unknown command "nope"; see keel --help\n')
})

test('parseArgs: values, =values, booleans, short flags, positionals and --', () => {
  const booleanFlags = new Set(['dev', 'help'])
  const parsed = parseArgs(
    ['pos1', '--port', '9000', '--host=0.0.0.0', '--dev', '--block-time=0.5', '-h', '--data-dir', '-weird', 'pos2', '--', '--not-a-flag'],
    { booleanFlags, shortFlags: { h: 'help' } },
  )
  assert.deepEqual({ ...parsed.flags }, {
    port: '9000', host: '0.0.0.0', dev: true, 'block-time': '0.5', help: true, 'data-dir': '-weird',
  })
  assert.deepEqual(parsed.positionals, ['pos1', 'pos2', '--not-a-flag'])

  assert.deepEqual({ ...parseArgs(['--dev=false', '--port'], { booleanFlags }).flags }, { dev: 'false', port: true })
  assert.deepEqual({ ...parseArgs(['--port', '--dev'], { booleanFlags }).flags }, { port: true, dev: true })
  assert.deepEqual({ ...parseArgs(['--port', '1', '--port', '2'], { booleanFlags }).flags }, { port: '2' })
  assert.throws(() => parseArgs(['-q'], { booleanFlags }), UsageError)
  assert.throws(() => parseArgs(['--=1'], { booleanFlags }), /malformed option --=1/)
})

test('keel start refuses a bad genesis file and a data folder another node holds, and exits', async () => {
  const work = mkdtempSync(join(tmpdir(), 'keel-cli-start-'))
  let running
  try {
    // the producer thread is spawned before the genesis is read: it must not keep the process alive
    const badGenesis = join(work, 'genesis.json')
    writeFileSync(badGenesis, JSON.stringify({ config: { chainId: -1 }, gasLimit: '0x1', alloc: {} }))
    const bad = await keel(['start', '--data-dir', join(work, 'a'), '--genesis', badGenesis, '--port', '0', '--metrics-port', '0'])
    assert.equal(bad.code, 1)
    assert.equal(bad.stderr, `keel: genesis ${badGenesis}: config.chainId must be a positive integer\n`)

    running = await startNode({ dataDir: join(work, 'b') })
    const second = await keel(['start', '--dev', '--data-dir', join(work, 'b'), '--port', '0', '--metrics-port', '0'])
    assert.equal(second.code, 1)
    assert.equal(second.stderr, `keel: the chain database ${join(work, 'b', 'chain')} is in use by another process (another node on the same --data-dir?)\n`)
  } finally {
    await running?.stop()
    rmSync(work, { recursive: true, force: true })
  }
})
