#!/usr/bin/env node
import { main } from '../dist/cli/main.js'
main(process.argv.slice(2)).catch((err) => {
  process.stderr.write(`keel: ${err instanceof Error ? err.message : String(err)}\n`)
  process.exit(1)
})
