// npm run bench [-- --quick] [-- --micro-only | --macro-only] [-- --only <text>]
// --only runs just the macro scenarios whose name contains <text> (case-insensitive; a|b for either), for iterating.
// Prints the micro benchmarks (tinybench) and the Keel-vs-anvil table. Exits 1 only if a scenario
// errored, never because of speed.

const argv = process.argv.slice(2)
const args = new Set(argv)
const onlyAt = argv.indexOf('--only')
const only = onlyAt >= 0 ? argv[onlyAt + 1] : undefined
const quick = args.has('--quick')
const time = quick ? 300 : 2000
let failed = false
const started = Date.now()

if (!args.has('--macro-only') && only === undefined) {
  for (const name of ['rpc', 'exec', 'build', 'logs']) {
    try {
      const mod = await import(`./micro/${name}.js`)
      const rows = await mod.run({ time, quick })
      console.log(`\nmicro/${name}`)
      console.table(rows)
      if (rows.some((r) => r.error !== undefined || r.errors > 0)) failed = true
    } catch (err) {
      failed = true
      console.log(`\nmicro/${name} FAILED: ${err.stack ?? err}`)
    }
  }
}

if (!args.has('--micro-only')) {
  try {
    const { runMacro } = await import('./macro/run.js')
    const { rows, failed: macroFailed } = await runMacro({ quick, only })
    console.log('\nmacro: Keel vs anvil (side by side, each scenario on Keel then at once on anvil, same load generator)')
    console.table(rows)
    if (macroFailed) failed = true
  } catch (err) {
    failed = true
    console.log(`\nmacro FAILED: ${err.stack ?? err}`)
  }
}

console.log(`\nbench ${quick ? '--quick ' : ''}finished in ${((Date.now() - started) / 1000).toFixed(0)} s${failed ? ': a scenario errored' : ''}`)
process.exit(failed ? 1 : 0)
