// The command-line value after a flag of a bench script (`--per-sender 200`), or the fallback.

export function flagValue(name, fallback) {
  const i = process.argv.indexOf(name)
  return i === -1 ? fallback : process.argv[i + 1]
}
