// A `solc` command line over solc-js (the devDependency test/helpers/contracts.js compiles with), for
// forge's `--use`: forge fetches native compilers from binaries.soliditylang.org, which CI need not reach.
// Forge asks `solc --version` and then compiles with `--standard-json`, the input on stdin.

const { readFileSync } = require('node:fs')
const solc = require('solc')

if (process.argv.includes('--version')) {
  const version = solc.version().replace('.Emscripten.clang', '.Linux.g++')
  process.stdout.write(`solc, the solidity compiler commandline interface\nVersion: ${version}\n`)
} else if (process.argv.includes('--standard-json')) {
  const readSource = (path) => {
    try {
      return { contents: readFileSync(path, 'utf8') }
    } catch (err) {
      return { error: String(err) }
    }
  }
  process.stdout.write(solc.compile(readFileSync(0, 'utf8'), { import: readSource }))
} else {
  process.stderr.write('solc-cli.cjs: only --version and --standard-json\n')
  process.exit(1)
}
